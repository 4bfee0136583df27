// Package controlplane_test checks that the local control plane behaves
// like a cluster: pods are scheduled onto simulated nodes and go Ready,
// owners garbage-collect their dependents, batch Jobs get pods that run, and
// stopping leaves no process behind.
package controlplane_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ray-operator/ray-operator/internal/controlplane"
	"github.com/ray-operator/ray-operator/internal/testing/capability"
	"github.com/ray-operator/ray-operator/internal/testing/exposure"
	"github.com/ray-operator/ray-operator/internal/testing/testenv"
)

// timeout bounds every wait for the cluster to act.
const timeout = 60 * time.Second

const nodes = 2

func TestLocalControlPlane(t *testing.T) {
	env := testenv.Start(t, testenv.WithFullControlPlane(nodes)) // logs its start-up time

	t.Run("simulated nodes are Ready with GPUs", func(t *testing.T) { testNodes(t, env) })
	t.Run("owned pod is scheduled, goes Ready and is garbage-collected", func(t *testing.T) { testOwnedPod(t, env) })
	t.Run("batch Job gets a pod that runs to completion", func(t *testing.T) { testJob(t, env) })
	t.Run("etcd takes only clients with a certificate of its CA", func(t *testing.T) { testEtcdTakesOnlyItsClients(t, env) })
}

func testNodes(t *testing.T, env *testenv.Env) {
	var list corev1.NodeList
	if err := env.Client.List(t.Context(), &list); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != nodes {
		t.Fatalf("%d nodes, want %d", len(list.Items), nodes)
	}
	for _, node := range list.Items {
		gpus := node.Status.Allocatable[controlplane.GPUResource]
		if gpus.Cmp(resource.MustParse("1")) < 0 {
			t.Errorf("node %s allocatable %s = %s, want at least 1", node.Name, controlplane.GPUResource, gpus.String())
		}
		if got := node.Annotations[controlplane.KwokNodeAnnotation]; got != controlplane.KwokNodeAnnotationValue {
			t.Errorf("node %s annotation %s = %q", node.Name, controlplane.KwokNodeAnnotation, got)
		}
	}
}

func testOwnedPod(t *testing.T, env *testenv.Env) {
	ctx, c := t.Context(), env.Client
	ns := env.Namespace(t)
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner", Namespace: ns}}
	if err := c.Create(ctx, owner); err != nil {
		t.Fatal(err)
	}
	pod := newPod(ns, "owned")
	pod.Labels = map[string]string{"app": "owned"}
	pod.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID}}
	if err := c.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}

	eventually(t, "pod scheduled and Ready", func() error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(pod), pod); err != nil {
			return err
		}
		return checkRunningReady(pod)
	})
	if !strings.HasPrefix(pod.Spec.NodeName, controlplane.NodeNamePrefix) {
		t.Errorf("pod on node %q, want a simulated node", pod.Spec.NodeName)
	}
	checkEndpointSlice(t, env, pod)

	if err := c.Delete(ctx, owner); err != nil {
		t.Fatal(err)
	}
	eventually(t, "pod garbage-collected", func() error {
		err := c.Get(ctx, client.ObjectKeyFromObject(pod), &corev1.Pod{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("pod still there (err %v)", err)
	})
}

// checkEndpointSlice checks that a Service selecting the Ready pod gets an
// EndpointSlice with the pod's IP (the controller manager writes it).
func checkEndpointSlice(t *testing.T, env *testenv.Env, pod *corev1.Pod) {
	t.Helper()
	ctx, c := t.Context(), env.Client
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "svc", Namespace: pod.Namespace},
		Spec: corev1.ServiceSpec{
			Selector: pod.Labels,
			Ports:    []corev1.ServicePort{{Name: "http", Port: 80}},
		},
	}
	if err := c.Create(ctx, svc); err != nil {
		t.Fatal(err)
	}
	eventually(t, "EndpointSlice with the pod", func() error {
		var slices discoveryv1.EndpointSliceList
		if err := c.List(ctx, &slices, client.InNamespace(pod.Namespace),
			client.MatchingLabels{discoveryv1.LabelServiceName: svc.Name}); err != nil {
			return err
		}
		for _, s := range slices.Items {
			for _, ep := range s.Endpoints {
				if slicesContain(ep.Addresses, pod.Status.PodIP) && ep.Conditions.Ready != nil && *ep.Conditions.Ready {
					return nil
				}
			}
		}
		return fmt.Errorf("no ready endpoint %s in %d slices", pod.Status.PodIP, len(slices.Items))
	})
}

func slicesContain(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func testJob(t *testing.T, env *testenv.Env) {
	ctx, c := t.Context(), env.Client
	ns := env.Namespace(t)
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "job", Namespace: ns},
		Spec:       batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: newPod(ns, "").Spec}},
	}
	job.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyNever
	if err := c.Create(ctx, job); err != nil {
		t.Fatal(err)
	}

	eventually(t, "Job complete", func() error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(job), job); err != nil {
			return err
		}
		if !hasCondition(job.Status.Conditions, batchv1.JobComplete) {
			return fmt.Errorf("job status %+v", job.Status)
		}
		return nil
	})
	if job.Status.Succeeded != 1 {
		t.Errorf("job succeeded = %d, want 1", job.Status.Succeeded)
	}
	var pods corev1.PodList
	if err := c.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels{"job-name": job.Name}); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range pods.Items {
		got = append(got, fmt.Sprintf("%s on kwok node: %t", p.Status.Phase, strings.HasPrefix(p.Spec.NodeName, controlplane.NodeNamePrefix)))
	}
	if diff := cmp.Diff([]string{"Succeeded on kwok node: true"}, got); diff != "" {
		t.Errorf("job pods (-want +got):\n%s", diff)
	}
}

// TestCancelStopsEverything starts a second control plane (binaries cached),
// its kwok with a configuration of its own (nodes are Ready only if kwok
// accepted it), checks what it exposes on this host, and that canceling
// Start's context ends every component.
func TestCancelStopsEverything(t *testing.T) {
	stateDir := t.TempDir()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	begin := time.Now()
	cp, err := controlplane.Start(ctx, controlplane.Options{StateDir: stateDir, Nodes: 1, KwokPodParallelism: 8})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("control plane with one node started in %v", time.Since(begin).Round(time.Millisecond))
	if running := processesUsing(t, stateDir); len(running) < 5 {
		t.Errorf("%d processes use %s, want etcd, apiserver, scheduler, controller-manager and kwok: %v", len(running), stateDir, running)
	}
	checkExposure(t, cp, stateDir)
	checkPIDs(t, cp, stateDir)
	checkKwokConfiguration(t, cp, stateDir)

	cancel()
	select {
	case <-cp.Done():
	case <-time.After(timeout):
		t.Fatal("control plane did not stop after cancel")
	}
	if left := processesUsing(t, stateDir); len(left) > 0 {
		t.Errorf("processes left after stop: %v", left)
	}
}

// checkKwokConfiguration checks that kwok runs with the configuration
// KwokPodParallelism wrote, beside the stages.
func checkKwokConfiguration(t *testing.T, cp *controlplane.ControlPlane, stateDir string) {
	t.Helper()
	cmdline, err := cmdlineOf(cp.PIDs()["kwok"])
	if err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(stateDir, "kwok-configuration.yaml")
	if !strings.Contains(cmdline, "--config="+config+",") {
		t.Errorf("kwok runs %q, want its --config to start with %s", cmdline, config)
	}
	data, err := os.ReadFile(config)
	if err != nil || !strings.Contains(string(data), "podPlayStageParallelism: 8") {
		t.Errorf("%s holds %q (%v), want podPlayStageParallelism: 8", config, data, err)
	}
}

// cmdlineOf is process pid's command line, its arguments separated by NULs.
func cmdlineOf(pid int) (string, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return string(b), err
}

// checkPIDs checks that PIDs names each component by the process running
// it: one whose command line uses the state directory.
func checkPIDs(t *testing.T, cp *controlplane.ControlPlane, stateDir string) {
	t.Helper()
	pids := cp.PIDs()
	for _, name := range []string{"etcd", "kube-apiserver", "kube-scheduler", "kube-controller-manager", "kwok"} {
		pid, ok := pids[name]
		if !ok {
			t.Errorf("PIDs() = %v, has no %s", pids, name)
			continue
		}
		cmdline, err := cmdlineOf(pid)
		if err != nil || !strings.Contains(cmdline, name) || !strings.Contains(cmdline, stateDir) {
			t.Errorf("pid %d of %s runs %q (%v), want %s with %s", pid, name, cmdline, err, name, stateDir)
		}
	}
}

// checkExposure checks that, without a node network, the control plane
// listens on loopback only, refuses anonymous requests, and keeps its keys,
// tokens and kubeconfig to their owner.
func checkExposure(t *testing.T, cp *controlplane.ControlPlane, stateDir string) {
	t.Helper()
	tree, err := exposure.ProcessTree(os.Getpid())
	if err != nil {
		capability.Missingf(t, "no /proc: %v", err)
	}
	listeners, err := exposure.HeldBy(tree)
	if err != nil {
		t.Fatal(err)
	}
	if len(listeners) < 5 { // etcd's client and peer, kube-apiserver, scheduler, controller manager
		t.Errorf("%d listeners of the control plane found, want at least 5: %v", len(listeners), listeners)
	}
	if beyond := exposure.Beyond(listeners); len(beyond) > 0 {
		t.Errorf("listening beyond loopback: %v", beyond)
	}
	if status, err := exposure.AnonymousStatus(t.Context(), cp.APIServerURL+"/version"); status != http.StatusUnauthorized {
		t.Errorf("anonymous GET /version: status %d (%v), want %d", status, err, http.StatusUnauthorized)
	}
	loose, secrets, err := exposure.LooseFiles(stateDir, exposure.Secret)
	if err != nil {
		t.Fatal(err)
	}
	if len(loose) > 0 || secrets < 5 {
		t.Errorf("of %d secret files (want at least 5), readable by others than the owner: %v", secrets, loose)
	}
}

// processesUsing lists the command lines of processes whose arguments
// mention dir (every component gets a path under its state directory).
func processesUsing(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		capability.Missingf(t, "no /proc: %v", err)
	}
	var found []string
	for _, e := range entries {
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || e.Name() == "self" {
			continue
		}
		args := strings.ReplaceAll(string(cmdline), "\x00", " ")
		if strings.Contains(args, dir) {
			found = append(found, args)
		}
	}
	return found
}

// eventually polls check until it succeeds or timeout passes.
func eventually(t *testing.T, what string, check func() error) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		last = check()
		return last == nil, nil
	})
	if err != nil {
		t.Fatalf("%s: not within %v: %v", what, timeout, last)
	}
}

func checkRunningReady(pod *corev1.Pod) error {
	if pod.Spec.NodeName == "" {
		return fmt.Errorf("pod %s not scheduled", pod.Name)
	}
	if pod.Status.Phase != corev1.PodRunning || pod.Status.PodIP == "" {
		return fmt.Errorf("pod %s phase %s, IP %q", pod.Name, pod.Status.Phase, pod.Status.PodIP)
	}
	for _, cond := range pod.Status.Conditions {
		if cond.Type == corev1.PodReady && cond.Status == corev1.ConditionTrue {
			return nil
		}
	}
	return fmt.Errorf("pod %s not Ready: %+v", pod.Name, pod.Status.Conditions)
}

func hasCondition(conds []batchv1.JobCondition, t batchv1.JobConditionType) bool {
	for _, c := range conds {
		if c.Type == t && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

func newPod(ns, name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name:  "main",
			Image: "busybox",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceCPU:    resource.MustParse("1"),
				corev1.ResourceMemory: resource.MustParse("1Gi"),
			}},
		}}},
	}
}
