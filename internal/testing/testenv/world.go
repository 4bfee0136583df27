package testenv

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// World is one test's namespace on an API server, with the reads, writes
// and waits the controllers' integration tests share. Every method fails
// the test on an error it does not expect, and every wait gives up after
// Timeout. A suite's own harness embeds it and adds what is particular to
// its controller.
type World struct {
	// T is the test.
	T *testing.T
	// Env is the API server.
	Env *Env
	// Client is Env's direct client.
	Client client.Client
	// NS is the test's namespace, deleted when the test ends.
	NS string
	// Timeout bounds each wait.
	Timeout time.Duration
}

// DefaultTimeout is a World's Timeout unless the test sets another: ample
// for controllers that requeue within seconds on a loaded two-core machine.
const DefaultTimeout = 30 * time.Second

// NewWorld creates a namespace for t on env; waits give up after
// DefaultTimeout.
func NewWorld(t *testing.T, env *Env) *World {
	t.Helper()
	return &World{T: t, Env: env, Client: env.Client, NS: env.Namespace(t), Timeout: DefaultTimeout}
}

// Eventually polls cond until it holds, and fails the test with what and
// cond's last error when Timeout passes first.
func (w *World) Eventually(what string, cond func() (bool, error)) {
	w.T.Helper()
	Eventually(w.T, what, w.Timeout, cond)
}

// Consistently polls cond for d and fails as soon as it does not hold.
func (w *World) Consistently(what string, d time.Duration, cond func() (bool, error)) {
	w.T.Helper()
	Consistently(w.T, what, d, cond)
}

// Create creates obj in the namespace.
func (w *World) Create(obj client.Object) {
	w.T.Helper()
	obj.SetNamespace(w.NS)
	if err := w.Client.Create(context.Background(), obj); err != nil {
		w.T.Fatal(err)
	}
}

// GetOrNil reads the named object of w's namespace into obj and returns
// it; nil when there is none.
func GetOrNil[T client.Object](w *World, name string, obj T) T {
	w.T.Helper()
	if !w.Get(name, obj) {
		var none T
		return none
	}
	return obj
}

// Get reads the named object of the namespace into obj; false when there
// is none.
func (w *World) Get(name string, obj client.Object) bool {
	w.T.Helper()
	if err := w.Client.Get(context.Background(), client.ObjectKey{Namespace: w.NS, Name: name}, obj); err != nil {
		if client.IgnoreNotFound(err) == nil {
			return false
		}
		w.T.Fatal(err)
	}
	return true
}

// WaitGet waits until the named object exists and reads it into obj.
func (w *World) WaitGet(name string, obj client.Object) {
	w.T.Helper()
	w.Eventually(fmt.Sprintf("%T %s", obj, name), func() (bool, error) { return w.Get(name, obj), nil })
}

// Update re-reads obj, applies mutate and writes it, until a write
// succeeds: conflicts are retried, and so is an object that does not
// exist yet. obj ends as written.
func (w *World) Update(obj client.Object, mutate func()) {
	w.T.Helper()
	w.update(obj, mutate, w.Client.Update)
}

// UpdateStatus is Update through the status subresource.
func (w *World) UpdateStatus(obj client.Object, mutate func()) {
	w.T.Helper()
	w.update(obj, mutate, func(ctx context.Context, obj client.Object, _ ...client.UpdateOption) error {
		return w.Client.Status().Update(ctx, obj)
	})
}

func (w *World) update(obj client.Object, mutate func(), write func(context.Context, client.Object, ...client.UpdateOption) error) {
	w.T.Helper()
	w.Eventually("update of "+obj.GetName(), func() (bool, error) {
		if err := w.Client.Get(context.Background(), client.ObjectKeyFromObject(obj), obj); err != nil {
			return false, err
		}
		mutate()
		err := write(context.Background(), obj)
		return err == nil, err
	})
}

// List lists objects of the namespace into list.
func (w *World) List(list client.ObjectList, opts ...client.ListOption) {
	w.T.Helper()
	if err := w.Client.List(context.Background(), list, append(opts, client.InNamespace(w.NS))...); err != nil {
		w.T.Fatal(err)
	}
}

// Pods lists the Pods of a RayCluster that also carry the labels of extra,
// sorted by name.
func (w *World) Pods(cluster string, extra map[string]string) []corev1.Pod {
	w.T.Helper()
	sel := client.MatchingLabels{rayv1.LabelCluster: cluster}
	maps.Copy(sel, extra)
	var list corev1.PodList
	w.List(&list, sel)
	slices.SortFunc(list.Items, func(a, b corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
	return list.Items
}

// WaitPods waits until Pods gives n Pods and returns them.
func (w *World) WaitPods(cluster string, extra map[string]string, n int) []corev1.Pod {
	w.T.Helper()
	var pods []corev1.Pod
	w.Eventually(fmt.Sprintf("%d Pods %v of %s", n, extra, cluster), func() (bool, error) {
		pods = w.Pods(cluster, extra)
		return len(pods) == n, fmt.Errorf("%d Pods", len(pods))
	})
	return pods
}

// RunPods waits until a RayCluster has n Pods and makes them Running and
// Ready, as a kubelet would; it returns them as stored.
func (w *World) RunPods(cluster string, n int) []corev1.Pod {
	w.T.Helper()
	pods := w.WaitPods(cluster, nil, n)
	for i := range pods {
		w.MarkRunningReady(&pods[i])
	}
	return pods
}

// MarkRunningReady makes pods Running and Ready, as a kubelet would.
func (w *World) MarkRunningReady(pods ...*corev1.Pod) {
	w.T.Helper()
	if err := MarkPodsRunningReady(context.Background(), w.Client, pods...); err != nil {
		w.T.Fatal(err)
	}
}

// Events are the events of the namespace regarding the object named name
// with reason (any reason when reason is empty), oldest first as listed.
func (w *World) Events(name, reason string) []eventsv1.Event {
	w.T.Helper()
	var list eventsv1.EventList
	w.List(&list)
	var out []eventsv1.Event
	for _, e := range list.Items {
		if e.Regarding.Name == name && (reason == "" || e.Reason == reason) {
			out = append(out, e)
		}
	}
	return out
}

// WaitEvent waits for an event regarding name with reason and returns the
// first.
func (w *World) WaitEvent(name, reason string) eventsv1.Event {
	w.T.Helper()
	var found []eventsv1.Event
	w.Eventually(fmt.Sprintf("event %s about %s", reason, name), func() (bool, error) {
		found = w.Events(name, reason)
		return len(found) > 0, nil
	})
	return found[0]
}
