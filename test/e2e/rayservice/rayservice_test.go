// Package rayservice_test runs the RayService controller against a real
// kube-apiserver (envtest) and a real Ray head with Ray Serve: the
// controller deploys serveConfigV2 through the real dashboard, reads the
// real application statuses, labels the head Pod from the real Serve
// proxy's health check, and applies a new config in place. The test plays
// the RayCluster controller: the head Pod it reports is the local Ray head
// (Pod IP 127.0.0.1).
package rayservice_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/clusterindex"
	"github.com/ray-operator/ray-operator/internal/controller/rayservice"
	"github.com/ray-operator/ray-operator/internal/dashboard"
	"github.com/ray-operator/ray-operator/internal/features"
	"github.com/ray-operator/ray-operator/internal/operator"
	"github.com/ray-operator/ray-operator/internal/serveapps"
	"github.com/ray-operator/ray-operator/internal/testing/testenv"
	"github.com/ray-operator/ray-operator/test/e2e/rayhead"
)

// serveTimeout bounds how long real Serve may take to run an application.
const serveTimeout = 3 * time.Minute

// The two versions of the application, imported from PYTHONPATH.
const (
	appV1 = "from ray import serve\n\n@serve.deployment(ray_actor_options={\"num_cpus\": 0.1})\nclass Hello:\n    def __call__(self, request):\n        return \"v1\"\n\napp = Hello.bind()\n"
	appV2 = "from ray import serve\n\n@serve.deployment(ray_actor_options={\"num_cpus\": 0.1})\nclass Hello:\n    def __call__(self, request):\n        return \"v2\"\n\napp = Hello.bind()\n"
)

func TestMain(m *testing.M) {
	ctrl.SetLogger(logr.Discard())
	os.Exit(m.Run())
}

// world is the envtest API server, the operator's RayService controller and
// the real Ray head it talks to.
type world struct {
	t         *testing.T
	c         client.Client
	ns        string
	proxyPort int
	dashboard dashboard.Client
}

func start(t *testing.T) *world {
	appDir := t.TempDir()
	for name, src := range map[string]string{"e2e_rs_v1.py": appV1, "e2e_rs_v2.py": appV2} {
		if err := os.WriteFile(filepath.Join(appDir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	head := rayhead.Start(t, rayhead.Options{Env: []string{"PYTHONPATH=" + appDir}})
	env := testenv.Start(t)
	w := &world{t: t, c: env.Client, ns: env.Namespace(t), proxyPort: testenv.FreePorts(t, 1)[0]}
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
		Scheme: env.Scheme, Metrics: metricsserver.Options{BindAddress: "0"}, Cache: operator.CacheOptions(w.ns),
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := clusterindex.Register(t.Context(), mgr.GetFieldIndexer()); err != nil {
		t.Fatal(err)
	}
	provider := dashboard.NewHTTPProvider(dashboard.WithHTTPClient(&http.Client{Timeout: 30 * time.Second}))
	if w.dashboard, err = provider(head.DashboardURL, ""); err != nil {
		t.Fatal(err)
	}
	r := rayservice.NewForManager(mgr, rayservice.Deps{
		// Every cluster's dashboard is the local head's.
		Dashboards:  func(_, token string) (dashboard.Client, error) { return provider(head.DashboardURL, token) },
		ProxyHealth: dashboard.DirectProxyCheck(dashboard.DirectProxyTimeout),
		NameSuffix:  func() string { return "e2eaa" },
	}, rayservice.Options{
		ZeroDowntime: true, ClusterDomain: "cluster.local", Features: features.NewGate(),
		InFlightRequeue: 500 * time.Millisecond, IdleRequeue: 2 * time.Second,
	})
	if err := r.SetupWithManager(mgr, 1); err != nil {
		t.Fatal(err)
	}
	var run testenv.Runner
	run.Start(mgr)
	t.Cleanup(run.Stop)
	return w
}

// serveConfig deploys module's app on the local proxy port.
func (w *world) serveConfig(module string) string {
	return fmt.Sprintf("http_options:\n  host: 127.0.0.1\n  port: %d\napplications:\n  - name: app\n    import_path: %s:app\n    route_prefix: /\n", w.proxyPort, module)
}

// rayService is a RayService whose head declares the local proxy port as
// its serve port.
func (w *world) rayService(module string) *rayv1.RayService {
	head := corev1.Container{Name: "ray-head", Image: "rayproject/ray:2.60.0",
		Ports: []corev1.ContainerPort{{Name: "serve", ContainerPort: int32(w.proxyPort)}, {Name: "dashboard", ContainerPort: 8265}}} //nolint:gosec // a TCP port
	return &rayv1.RayService{
		ObjectMeta: metav1.ObjectMeta{Name: "svc", Namespace: w.ns},
		Spec: rayv1.RayServiceSpec{
			ServeConfigV2: w.serveConfig(module),
			RayClusterSpec: rayv1.RayClusterSpec{
				RayVersion: "2.60.0",
				HeadGroupSpec: rayv1.HeadGroupSpec{
					RayStartParams: map[string]string{},
					Template:       corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{head}}},
				},
			},
		},
	}
}

// bringUp plays the RayCluster controller for the cluster: its head Pod is
// the local Ray head (IP 127.0.0.1), running and ready.
func (w *world) bringUp(cluster *rayv1.RayCluster) {
	w.t.Helper()
	ctx := context.Background()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: cluster.Name + "-head", Namespace: w.ns, Labels: map[string]string{
			rayv1.LabelCluster: cluster.Name, rayv1.LabelNodeType: string(rayv1.HeadNode), rayv1.LabelServe: "false",
		}},
		Spec: *cluster.Spec.HeadGroupSpec.Template.Spec.DeepCopy(),
	}
	if err := w.c.Create(ctx, pod); err != nil {
		w.t.Fatal(err)
	}
	if err := testenv.MarkPodsRunningReady(ctx, w.c, pod); err != nil {
		w.t.Fatal(err)
	}
	if err := testenv.UpdatePodStatus(ctx, w.c, pod, func(p *corev1.Pod) {
		p.Status.PodIP, p.Status.PodIPs = "127.0.0.1", []corev1.PodIP{{IP: "127.0.0.1"}}
	}); err != nil {
		w.t.Fatal(err)
	}
	meta.SetStatusCondition(&cluster.Status.Conditions, metav1.Condition{
		Type: string(rayv1.HeadPodReady), Status: metav1.ConditionTrue, Reason: "HeadPodRunningAndReady",
	})
	cluster.Status.State = rayv1.Ready
	if err := w.c.Status().Update(ctx, cluster); err != nil {
		w.t.Fatal(err)
	}
}

// eventually polls cond until it holds or serveTimeout passes; polling real
// processes is the one place this test watches the clock.
func (w *world) eventually(what string, cond func() (bool, string)) {
	w.t.Helper()
	last := ""
	err := wait.PollUntilContextTimeout(w.t.Context(), 250*time.Millisecond, serveTimeout, true, func(context.Context) (bool, error) {
		ok, state := cond()
		last = state
		return ok, nil
	})
	if err != nil {
		w.t.Fatalf("timed out waiting for %s (last: %s)", what, last)
	}
}

// get reads obj by name; false when missing.
func (w *world) get(name string, obj client.Object) bool {
	err := w.c.Get(context.Background(), client.ObjectKey{Namespace: w.ns, Name: name}, obj)
	if client.IgnoreNotFound(err) != nil {
		w.t.Fatal(err)
	}
	return err == nil
}

// answer is what Serve answers on /.
func (w *world) answer() string {
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/", w.proxyPort)) //nolint:noctx // a test probe
	if err != nil {
		return err.Error()
	}
	defer func() { _ = resp.Body.Close() }()
	body, _ := io.ReadAll(resp.Body)
	return strings.TrimSpace(string(body))
}

func TestRayServiceWithRealServe(t *testing.T) {
	w := start(t)
	if err := w.c.Create(context.Background(), w.rayService("e2e_rs_v1")); err != nil {
		t.Fatal(err)
	}
	cluster := &rayv1.RayCluster{}
	w.eventually("the RayCluster", func() (bool, string) { return w.get("svc-e2eaa", cluster), "" })
	w.bringUp(cluster)

	rs := &rayv1.RayService{}
	w.eventually("the application RUNNING on the promoted cluster", func() (bool, string) {
		w.get("svc", rs)
		app := rs.Status.ActiveServiceStatus.Applications["app"]
		return rs.Status.ActiveServiceStatus.RayClusterName == "svc-e2eaa" && app.Status == rayv1.ApplicationStatusRunning,
			fmt.Sprintf("%+v", rs.Status.ActiveServiceStatus)
	})
	if dep := rs.Status.ActiveServiceStatus.Applications["app"].Deployments["Hello"]; dep.Status != "HEALTHY" {
		t.Errorf("deployment Hello: %+v", dep)
	}
	head := &corev1.Pod{}
	w.eventually("the head labelled from the real proxy health check", func() (bool, string) {
		w.get("svc-e2eaa-head", head)
		return head.Labels[rayv1.LabelServe] == "true", head.Labels[rayv1.LabelServe]
	})
	if got := w.answer(); got != "v1" {
		t.Errorf("Serve answers %q, want v1", got)
	}

	w.eventually("the new config written", func() (bool, string) {
		w.get("svc", rs)
		rs.Spec.ServeConfigV2 = w.serveConfig("e2e_rs_v2")
		err := w.c.Update(context.Background(), rs)
		return err == nil, fmt.Sprint(err)
	})
	w.eventually("Serve answering with the new version", func() (bool, string) {
		got := w.answer()
		return got == "v2", got
	})
	w.eventually("the new config recorded on the same cluster", func() (bool, string) {
		w.get("svc-e2eaa", cluster)
		return serveapps.Recorded(cluster.Annotations[rayv1.AnnotationAppliedServeConfig], w.serveConfig("e2e_rs_v2")), ""
	})
	list := &rayv1.RayClusterList{}
	if err := w.c.List(context.Background(), list, client.InNamespace(w.ns)); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 {
		t.Errorf("%d clusters after an in-place config change, want 1", len(list.Items))
	}

	// The body an incremental upgrade PUTs to move capacity is one real
	// Serve takes: target_capacity as a top-level field of the config.
	body, err := serveapps.ConfigJSON(w.serveConfig("e2e_rs_v2"), ptr.To[int32](50))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.dashboard.UpdateDeployments(t.Context(), body); err != nil {
		t.Fatal(err)
	}
	w.eventually("Serve reporting target_capacity 50", func() (bool, string) {
		details, err := w.dashboard.GetServeDetails(t.Context())
		if err != nil {
			return false, err.Error()
		}
		return details.TargetCapacity != nil && *details.TargetCapacity == 50, fmt.Sprint(details.TargetCapacity)
	})
}
