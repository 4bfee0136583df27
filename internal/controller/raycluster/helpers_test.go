package raycluster

import (
	"slices"
	"strings"
	"testing"
	"time"

	routev1 "github.com/openshift/api/route/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/clusterindex"
	"github.com/ray-operator/ray-operator/internal/managerdeps"
)

const testNamespace = "default"

// clusterBuilder builds test RayClusters fluently.
type clusterBuilder struct{ rc *rayv1.RayCluster }

func makeCluster(name string) *clusterBuilder {
	return &clusterBuilder{rc: &rayv1.RayCluster{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: testNamespace, UID: types.UID(name + "-uid"), Generation: 1},
		Spec: rayv1.RayClusterSpec{
			RayVersion: "2.52.0",
			HeadGroupSpec: rayv1.HeadGroupSpec{
				RayStartParams: map[string]string{},
				Template:       podTemplate("ray-head"),
			},
		},
	}}
}

func podTemplate(container string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{
		Name:  container,
		Image: "rayproject/ray:2.52.0",
		Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
			corev1.ResourceCPU:    resource.MustParse("1"),
			corev1.ResourceMemory: resource.MustParse("1Gi"),
		}},
	}}}}
}

func (b *clusterBuilder) worker(name string, replicas int32) *clusterBuilder {
	b.rc.Spec.WorkerGroupSpecs = append(b.rc.Spec.WorkerGroupSpecs, rayv1.WorkerGroupSpec{
		GroupName:      name,
		Replicas:       ptr.To(replicas),
		MinReplicas:    ptr.To[int32](0),
		MaxReplicas:    ptr.To[int32](10),
		NumOfHosts:     1,
		RayStartParams: map[string]string{},
		Template:       podTemplate("ray-worker"),
	})
	return b
}

func (b *clusterBuilder) with(mutate func(*rayv1.RayCluster)) *clusterBuilder {
	mutate(b.rc)
	return b
}

func (b *clusterBuilder) obj() *rayv1.RayCluster { return b.rc.DeepCopy() }

// harness is a Reconciler over a fake client, with a fake clock and a fake
// event recorder.
type harness struct {
	t   *testing.T
	c   client.Client
	rec *events.FakeRecorder
	clk *clocktesting.FakeClock
	r   *Reconciler
}

func testScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, rayv1.AddToScheme, routev1.Install} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	return scheme
}

// fakeClientBuilder is a fake client builder with the scheme and the field
// indexes the controller lists its Pods and Services by.
func fakeClientBuilder(scheme *runtime.Scheme) *fake.ClientBuilder {
	return fake.NewClientBuilder().WithScheme(scheme).
		WithIndex(&corev1.Pod{}, clusterindex.Pods, clusterindex.ClusterOf).
		WithIndex(&corev1.Service{}, clusterindex.Services, clusterindex.ClusterOf)
}

func newHarness(t *testing.T, opts Options, objs ...client.Object) *harness {
	t.Helper()
	return newHarnessWithFuncs(t, opts, interceptor.Funcs{}, objs...)
}

// newHarnessWithFuncs is newHarness whose client calls go through funcs.
func newHarnessWithFuncs(t *testing.T, opts Options, funcs interceptor.Funcs, objs ...client.Object) *harness {
	t.Helper()
	c := fakeClientBuilder(testScheme(t)).
		WithObjects(objs...).
		WithStatusSubresource(&rayv1.RayCluster{}, &corev1.Pod{}).
		WithInterceptorFuncs(funcs).
		Build()
	h := &harness{t: t, c: c, rec: events.NewFakeRecorder(1000), clk: clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))}
	h.r = New(Deps{Core: managerdeps.Core{Client: c, Recorder: h.rec, Clock: h.clk}}, opts)
	return h
}

func (h *harness) reconcile(name string) (ctrl.Result, error) {
	h.t.Helper()
	return h.r.Reconcile(h.t.Context(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: testNamespace, Name: name}})
}

// mustReconcile reconciles n times and fails on an error.
func (h *harness) mustReconcile(name string, n int) ctrl.Result {
	h.t.Helper()
	var res ctrl.Result
	for range n {
		var err error
		if res, err = h.reconcile(name); err != nil {
			h.t.Fatalf("Reconcile() error = %v", err)
		}
	}
	return res
}

func (h *harness) cluster(name string) *rayv1.RayCluster {
	h.t.Helper()
	rc := &rayv1.RayCluster{}
	if err := h.c.Get(h.t.Context(), types.NamespacedName{Namespace: testNamespace, Name: name}, rc); err != nil {
		h.t.Fatal(err)
	}
	return rc
}

func (h *harness) update(rc *rayv1.RayCluster) {
	h.t.Helper()
	if err := h.c.Update(h.t.Context(), rc); err != nil {
		h.t.Fatal(err)
	}
}

// pods returns the Pods with the given labels, sorted by name.
func (h *harness) pods(labels map[string]string) []corev1.Pod {
	h.t.Helper()
	var list corev1.PodList
	if err := h.c.List(h.t.Context(), &list, client.MatchingLabels(labels)); err != nil {
		h.t.Fatal(err)
	}
	slices.SortFunc(list.Items, func(a, b corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
	return list.Items
}

func (h *harness) podNames(labels map[string]string) []string {
	var names []string
	for _, p := range h.pods(labels) {
		names = append(names, p.Name)
	}
	return names
}

// setPodStatus sets the status of every Pod with the given labels.
func (h *harness) setPodStatus(labels map[string]string, mutate func(*corev1.Pod)) {
	h.t.Helper()
	for _, p := range h.pods(labels) {
		mutate(&p)
		if err := h.c.Status().Update(h.t.Context(), &p); err != nil {
			h.t.Fatal(err)
		}
	}
}

func runningReady(p *corev1.Pod) {
	p.Status.Phase = corev1.PodRunning
	p.Status.PodIP = "10.0.0.1"
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
}

// eventReasons drains the recorder and returns "Type Reason" of each event.
// eventStrings drains the recorded events: "<type> <reason> <note>".
func (h *harness) eventStrings() []string {
	var out []string
	for {
		select {
		case e := <-h.rec.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

func (h *harness) eventReasons() []string {
	var out []string
	for {
		select {
		case e := <-h.rec.Events:
			fields := strings.SplitN(e, " ", 3)
			out = append(out, fields[0]+" "+fields[1])
		default:
			return out
		}
	}
}
