package raycluster

import (
	"context"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/managerdeps"
	"github.com/ray-operator/ray-operator/internal/rayservices"
)

// laggingCache makes Pods invisible to List until the first Get of each
// one, as an informer cache catching up just when the expectations look.
type laggingCache struct {
	mu     sync.Mutex
	unseen map[string]bool
}

func (l *laggingCache) funcs() interceptor.Funcs {
	return interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if _, ok := obj.(*corev1.Pod); ok {
				l.mu.Lock()
				delete(l.unseen, key.Name)
				l.mu.Unlock()
			}
			return c.Get(ctx, key, obj, opts...)
		},
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			if err := c.List(ctx, list, opts...); err != nil {
				return err
			}
			pods, ok := list.(*corev1.PodList)
			if !ok {
				return nil
			}
			l.mu.Lock()
			defer l.mu.Unlock()
			var seen []corev1.Pod
			for _, p := range pods.Items {
				if !l.unseen[p.Name] {
					seen = append(seen, p)
				}
			}
			pods.Items = seen
			return nil
		},
	}
}

// TestExpectationsCheckedBeforeTheList: a pass lists the Pods once, so the
// expectations of every group must be checked before that List. Here the
// cache shows the Pods of the previous pass only from the expectations'
// Get on: a List taken before the checks would miss them while the checks
// pass, and the pass would create the head and the worker a second time.
func TestExpectationsCheckedBeforeTheList(t *testing.T) {
	lag := &laggingCache{unseen: map[string]bool{}}
	c := fakeClientBuilder(testScheme(t)).
		WithObjects(makeCluster("rc").worker("small", 1).obj()).
		WithStatusSubresource(&rayv1.RayCluster{}, &corev1.Pod{}).
		WithInterceptorFuncs(lag.funcs()).
		Build()
	h := &harness{t: t, c: c, rec: events.NewFakeRecorder(1000), clk: clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))}
	h.r = New(Deps{Core: managerdeps.Core{Client: c, Recorder: h.rec, Clock: h.clk}}, Options{})
	h.mustReconcile("rc", 1)
	created := h.pods(map[string]string{rayv1.LabelCluster: "rc"})
	if len(created) != 2 {
		t.Fatalf("first pass created %d Pods, want 2", len(created))
	}
	lag.mu.Lock()
	for _, p := range created {
		lag.unseen[p.Name] = true
	}
	lag.mu.Unlock()

	h.mustReconcile("rc", 1)
	lag.mu.Lock()
	lag.unseen = map[string]bool{}
	lag.mu.Unlock()
	if got := h.podNames(map[string]string{rayv1.LabelCluster: "rc"}); len(got) != 2 {
		t.Errorf("Pods after the second pass = %v, want the 2 of the first", got)
	}
}

func TestPodSnapshotMatching(t *testing.T) {
	pod := func(name string, labels map[string]string) corev1.Pod {
		p := corev1.Pod{}
		p.Name, p.Labels = name, labels
		return p
	}
	snap := &podSnapshot{pods: []corev1.Pod{
		pod("head", map[string]string{rayv1.LabelNodeType: string(rayv1.HeadNode), rayv1.LabelGroup: rayv1.HeadGroupName}),
		pod("a-1", map[string]string{rayv1.LabelNodeType: string(rayv1.WorkerNode), rayv1.LabelGroup: "a"}),
		pod("b-1", map[string]string{rayv1.LabelNodeType: string(rayv1.WorkerNode), rayv1.LabelGroup: "b"}),
		pod("unlabelled", nil),
	}}
	cases := map[string]struct {
		extra map[string]string
		want  []string
	}{
		"all":     {want: []string{"head", "a-1", "b-1", "unlabelled"}},
		"head":    {extra: headPodLabels, want: []string{"head"}},
		"workers": {extra: workerPodLabels, want: []string{"a-1", "b-1"}},
		"group a": {extra: groupPodLabels("a"), want: []string{"a-1"}},
		"none":    {extra: groupPodLabels("c")},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got []string
			for _, p := range snap.matching(tc.extra) {
				got = append(got, p.Name)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("matching (-want +got):\n%s", diff)
			}
		})
	}
}

// TestListPodsByClusterIndex: listPods reads the cluster's Pods through
// clusterindex.Pods and narrows them by labels: no Pod of another cluster
// (one whose name starts with this one's included), of another namespace or
// without the label comes back.
func TestListPodsByClusterIndex(t *testing.T) {
	pod := func(ns, name, cluster string, labels map[string]string) client.Object {
		p := &corev1.Pod{}
		p.Namespace, p.Name = ns, name
		p.Labels = map[string]string{}
		if cluster != "" {
			p.Labels[rayv1.LabelCluster] = cluster
		}
		maps.Copy(p.Labels, labels)
		return p
	}
	head := map[string]string{rayv1.LabelNodeType: string(rayv1.HeadNode)}
	h := newHarness(t, Options{},
		pod(testNamespace, "rc-head", "rc", head),
		pod(testNamespace, "rc-a-1", "rc", groupPodLabels("a")),
		pod(testNamespace, "rc-a-2", "rc", groupPodLabels("a")),
		pod(testNamespace, "rc-b-1", "rc", groupPodLabels("b")),
		pod(testNamespace, "rc2-head", "rc2", head),
		pod(testNamespace, "other", "", head),
		pod("elsewhere", "rc-head", "rc", head),
	)
	cluster := makeCluster("rc").obj()
	cases := map[string]struct {
		extra map[string]string
		want  []string
	}{
		"all":     {want: []string{"rc-a-1", "rc-a-2", "rc-b-1", "rc-head"}},
		"head":    {extra: headPodLabels, want: []string{"rc-head"}},
		"workers": {extra: workerPodLabels, want: []string{"rc-a-1", "rc-a-2", "rc-b-1"}},
		"group a": {extra: groupPodLabels("a"), want: []string{"rc-a-1", "rc-a-2"}},
		"none":    {extra: groupPodLabels("c")},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			pods, err := h.r.listPods(context.Background(), cluster, tc.extra)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range pods {
				if p.Namespace != testNamespace {
					t.Errorf("Pod %s/%s of another namespace listed", p.Namespace, p.Name)
				}
				got = append(got, p.Name)
			}
			slices.Sort(got)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("listPods (-want +got):\n%s", diff)
			}
		})
	}
}

// TestHeadServicesByClusterIndex: headServices reads through
// clusterindex.Services the Services labelled as this cluster's head Service:
// not another cluster's (one whose name starts with this one's included),
// not one of another namespace, not one of this cluster that is not its
// head Service.
func TestHeadServicesByClusterIndex(t *testing.T) {
	cluster := makeCluster("rc").obj()
	service := func(ns, name string, labels map[string]string) client.Object {
		s := &corev1.Service{}
		s.Namespace, s.Name, s.Labels = ns, name, labels
		return s
	}
	other := makeCluster("rc2").obj()
	serve := rayservices.HeadServiceLabels(cluster)
	serve[rayv1.LabelNodeType] = "serve"
	h := newHarness(t, Options{},
		service(testNamespace, "rc-head-svc", rayservices.HeadServiceLabels(cluster)),
		service(testNamespace, "rc2-head-svc", rayservices.HeadServiceLabels(other)),
		service(testNamespace, "rc-serve-svc", serve),
		service("elsewhere", "rc-head-svc", rayservices.HeadServiceLabels(cluster)),
	)
	services, err := h.r.headServices(context.Background(), cluster)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range services {
		got = append(got, s.Namespace+"/"+s.Name)
	}
	if want := []string{testNamespace + "/rc-head-svc"}; !slices.Equal(got, want) {
		t.Errorf("head Services %v, want %v", got, want)
	}
}

// TestRayPods: rayPods keeps the head and worker Pods in order and leaves
// out any other; with no other it is the listed slice itself.
func TestRayPods(t *testing.T) {
	pod := func(name, nodeType string) corev1.Pod {
		p := corev1.Pod{}
		p.Name = name
		p.Labels = map[string]string{rayv1.LabelNodeType: nodeType}
		return p
	}
	head, w1, w2 := pod("h", string(rayv1.HeadNode)), pod("w1", string(rayv1.WorkerNode)), pod("w2", string(rayv1.WorkerNode))
	names := func(pods []corev1.Pod) (out []string) {
		for _, p := range pods {
			out = append(out, p.Name)
		}
		return out
	}
	all := []corev1.Pod{w1, head, w2}
	if got := rayPods(all); &got[0] != &all[0] || !slices.Equal(names(got), []string{"w1", "h", "w2"}) {
		t.Errorf("only Ray Pods: got %v (a copy: %t), want the listed slice", names(got), &got[0] != &all[0])
	}
	mixed := []corev1.Pod{w1, pod("x", "other"), head, pod("y", ""), w2}
	if got := rayPods(mixed); !slices.Equal(names(got), []string{"w1", "h", "w2"}) {
		t.Errorf("with others: got %v, want [w1 h w2]", names(got))
	}
	if got := names(mixed); !slices.Equal(got, []string{"w1", "x", "h", "y", "w2"}) {
		t.Errorf("the listed slice changed: %v", got)
	}
}
