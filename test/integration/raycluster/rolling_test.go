package raycluster_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/podstatus"
	"github.com/ray-operator/ray-operator/internal/rollingupdate"
	"github.com/ray-operator/ray-operator/internal/testing/testenv"
)

const rolledImage = "rayproject/ray:2.53.0"

// groupWatch follows a worker group's Pods through a watch started at a
// List's resourceVersion, so it sees every state the API server stored,
// and keeps the extremes of the group's size and readiness.
type groupWatch struct {
	mu                 sync.Mutex
	pods               map[string]*corev1.Pod
	maxPods, minReady  int
	createdWithNewSpec []string
}

func (w *world) watchGroup(cluster, group string) *groupWatch {
	w.T.Helper()
	wc, err := client.NewWithWatch(w.Env.Config, client.Options{Scheme: w.Env.Scheme})
	if err != nil {
		w.T.Fatal(err)
	}
	sel := client.MatchingLabels{rayv1.LabelCluster: cluster, rayv1.LabelGroup: group}
	var list corev1.PodList
	if err := wc.List(context.Background(), &list, client.InNamespace(w.NS), sel); err != nil {
		w.T.Fatal(err)
	}
	g := &groupWatch{pods: map[string]*corev1.Pod{}}
	for i := range list.Items {
		g.pods[list.Items[i].Name] = &list.Items[i]
	}
	g.maxPods, g.minReady = len(g.pods), g.ready()
	watcher, err := wc.Watch(context.Background(), &corev1.PodList{}, client.InNamespace(w.NS), sel,
		&client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: list.ResourceVersion}})
	if err != nil {
		w.T.Fatal(err)
	}
	w.T.Cleanup(watcher.Stop)
	go func() {
		for ev := range watcher.ResultChan() {
			if pod, ok := ev.Object.(*corev1.Pod); ok {
				g.observe(ev.Type, pod)
			}
		}
	}()
	return g
}

func (g *groupWatch) observe(t watch.EventType, pod *corev1.Pod) {
	g.mu.Lock()
	defer g.mu.Unlock()
	switch t {
	case watch.Added, watch.Modified:
		if _, seen := g.pods[pod.Name]; !seen && pod.Spec.Containers[0].Image == rolledImage {
			g.createdWithNewSpec = append(g.createdWithNewSpec, pod.Name)
		}
		g.pods[pod.Name] = pod
	case watch.Deleted:
		delete(g.pods, pod.Name)
	}
	g.maxPods, g.minReady = max(g.maxPods, len(g.pods)), min(g.minReady, g.ready())
}

// ready counts the Ready Pods that are not terminating.
func (g *groupWatch) ready() int {
	n := 0
	for _, p := range g.pods {
		if p.DeletionTimestamp == nil && slices.ContainsFunc(p.Status.Conditions, func(c corev1.PodCondition) bool {
			return c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue
		}) {
			n++
		}
	}
	return n
}

func (g *groupWatch) extremes() (maxPods, minReady int, created []string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.maxPods, g.minReady, slices.Clone(g.createdWithNewSpec)
}

// rollToEnd plays the kubelet (every unready worker becomes Ready) until
// the group has want Pods, all with the new image and hash.
func (w *world) rollToEnd(cluster, group string, want int) []corev1.Pod {
	w.T.Helper()
	var pods []corev1.Pod
	w.Eventually(fmt.Sprintf("%d workers of %s rolled to %s", want, group, rolledImage), func() (bool, error) {
		pods = w.Pods(cluster, groupLabels(group))
		done := len(pods) == want
		for i := range pods {
			if !podstatus.RunningAndReady(&pods[i]) {
				if err := testenv.MarkPodsRunningReady(context.Background(), w.Client, &pods[i]); err != nil {
					return false, err
				}
			}
			done = done && pods[i].Spec.Containers[0].Image == rolledImage
		}
		return done, fmt.Errorf("%d Pods", len(pods))
	})
	return pods
}

// TestRollingUpdateBatches: 4 workers (minReplicas 3) with maxSurge 1 and
// maxUnavailable 2 roll to a new image; the watch never sees more than 5
// Pods, nor fewer than 3 ready ones (minReplicas wins over maxUnavailable),
// every new Pod carries the group's new hash, the events report batches and
// the head is untouched.
func TestRollingUpdateBatches(t *testing.T) {
	w := newWorld(t)
	g := group("small", 4)
	g.MinReplicas = ptr.To[int32](3)
	rc := w.newCluster("rolling", g)
	rc.Spec.UpgradeStrategy = clusterSpec().RollingUpdate(intstr.FromInt32(1), intstr.FromInt32(2)).UpgradeStrategy
	w.Create(rc)
	head := w.RunPods("rolling", 5)[0]
	old := map[string]bool{}
	for _, p := range w.Pods("rolling", groupLabels("small")) {
		old[p.Name] = true
	}
	watched := w.watchGroup("rolling", "small")

	w.edit("rolling", func(rc *rayv1.RayCluster) {
		rc.Spec.WorkerGroupSpecs[0].Template.Spec.Containers[0].Image = rolledImage
	})
	pods := w.rollToEnd("rolling", "small", 4)
	wantHash, err := rollingupdate.GroupHash(&w.RayCluster("rolling").Spec.WorkerGroupSpecs[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods {
		if old[p.Name] || p.Annotations[rollingupdate.AnnotationTemplateHash] != wantHash {
			t.Errorf("Pod %s: old %v, hash %q, want a new Pod with %q", p.Name, old[p.Name], p.Annotations[rollingupdate.AnnotationTemplateHash], wantHash)
		}
	}
	maxPods, minReady, created := watched.extremes()
	if maxPods > 5 || minReady < 3 {
		t.Errorf("the watch saw up to %d Pods and down to %d ready ones; want at most 5 and at least 3", maxPods, minReady)
	}
	if len(created) != 4 {
		t.Errorf("new Pods created: %v, want 4", created)
	}
	if batches := w.Events("rolling", "RollingUpdateBatch"); len(batches) < 2 {
		t.Errorf("%d RollingUpdateBatch events, want one per batch (at least 2)", len(batches))
	}
	if heads := w.Pods("rolling", headLabels()); len(heads) != 1 || heads[0].Name != head.Name {
		t.Errorf("the head was replaced")
	}
}

// TestRollingUpdateLeavesWorkersToDeleteToTheAutoscaler: while a rolling
// update waits for a new Pod to be ready, the autoscaler scales down by
// naming an old worker; that worker is deleted once and not replaced: the
// update ends with 2 new Pods, and only 2 were ever created.
func TestRollingUpdateLeavesWorkersToDeleteToTheAutoscaler(t *testing.T) {
	w := newWorld(t)
	rc := w.newCluster("drain", group("small", 3))
	rc.Spec.UpgradeStrategy = clusterSpec().RollingUpdate(intstr.FromInt32(0), intstr.FromInt32(1)).UpgradeStrategy
	w.Create(rc)
	w.RunPods("drain", 4)
	watched := w.watchGroup("drain", "small")
	w.edit("drain", func(rc *rayv1.RayCluster) {
		rc.Spec.WorkerGroupSpecs[0].Template.Spec.Containers[0].Image = rolledImage
	})

	var victim string
	w.Eventually("one old worker replaced by an unready new one", func() (bool, error) {
		pods := w.Pods("drain", groupLabels("small"))
		var olds, news int
		for _, p := range pods {
			if p.Spec.Containers[0].Image == rolledImage {
				news++
			} else {
				olds++
				victim = p.Name
			}
		}
		return olds == 2 && news == 1, fmt.Errorf("%d old, %d new", olds, news)
	})
	w.edit("drain", func(rc *rayv1.RayCluster) {
		rc.Spec.WorkerGroupSpecs[0].Replicas = ptr.To[int32](2)
		rc.Spec.WorkerGroupSpecs[0].ScaleStrategy.WorkersToDelete = []string{victim}
	})
	w.Eventually("the named worker gone and workersToDelete cleared", func() (bool, error) {
		rc := w.RayCluster("drain")
		return !slices.ContainsFunc(w.Pods("drain", groupLabels("small")), func(p corev1.Pod) bool { return p.Name == victim }) &&
			len(rc.Spec.WorkerGroupSpecs[0].ScaleStrategy.WorkersToDelete) == 0, nil
	})
	w.rollToEnd("drain", "small", 2)
	maxPods, minReady, created := watched.extremes()
	if len(created) != 2 {
		t.Errorf("new Pods created: %v, want 2 (the named worker is not replaced)", created)
	}
	if maxPods > 3 || minReady < 1 {
		t.Errorf("the watch saw up to %d Pods and down to %d ready ones; want at most 3 and at least 1", maxPods, minReady)
	}
}
