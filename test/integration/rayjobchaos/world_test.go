package rayjobchaos_test

import (
	"context"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/submitter"
	"github.com/ray-operator/ray-operator/internal/testing/testenv"
)

// world is everything around the operator: the test's own client (with its
// own connections, cut when the run ends), the watches that record what
// the API server holds, the dashboards, and three stand-ins for what a bare
// API server lacks: a kubelet that runs Pods, a garbage collector, and the
// Ray clusters' dashboards. The Job controller and the submitters are played
// by each lifecycle's user (actor_test.go), who knows the script.
type world struct {
	ns     string
	c      client.WithWatch
	ks     *testenv.KillSwitch
	dash   *dashboards
	rec    *recorder
	faults *violations
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	// kubelet and gc are the work queues of those stand-ins.
	kubelet chan types.NamespacedName
	gc      chan types.UID
}

// newWorld starts the watches and stand-ins on namespace ns.
func newWorld(env *testenv.Env, ns string, dash *dashboards, faults *violations) (*world, error) {
	ks := testenv.NewKillSwitch()
	c, err := client.NewWithWatch(ks.Config(env.Config), client.Options{Scheme: env.Scheme})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	w := &world{ns: ns, c: c, ks: ks, dash: dash, faults: faults, ctx: ctx, cancel: cancel,
		rec: newRecorder(faults), kubelet: make(chan types.NamespacedName, 4096), gc: make(chan types.UID, 4096)}
	w.goRun(w.runKubelet)
	w.goRun(w.runGarbageCollector)
	for _, kind := range []struct {
		list   client.ObjectList
		handle func(watch.EventType, client.Object)
	}{
		{&rayv1.RayJobList{}, w.onRayJob},
		{&rayv1.RayClusterList{}, w.onRayCluster},
		{&batchv1.JobList{}, w.onJob},
		{&corev1.PodList{}, w.onPod},
	} {
		if err := w.watch(kind.list, kind.handle); err != nil {
			w.stop()
			return nil, err
		}
	}
	return w, nil
}

// stop ends the watches and stand-ins and cuts the world's connections.
func (w *world) stop() {
	w.cancel()
	w.wg.Wait()
	w.ks.Kill()
}

func (w *world) goRun(f func()) {
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		f()
	}()
}

// watch lists list's kind in the namespace (it is empty: nothing to
// replay) and follows every change from there, watching again from the
// last version seen when the API server ends a watch. Watch events of one
// kind come in the order of the changes, so the recorder sees every state
// each object went through.
func (w *world) watch(list client.ObjectList, handle func(watch.EventType, client.Object)) error {
	if err := w.c.List(w.ctx, list, client.InNamespace(w.ns)); err != nil {
		return err
	}
	rv := list.GetResourceVersion()
	w.goRun(func() {
		for w.ctx.Err() == nil {
			opts := &client.ListOptions{Namespace: w.ns, Raw: &metav1.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true}}
			events, err := w.c.Watch(w.ctx, list.DeepCopyObject().(client.ObjectList), opts)
			if err != nil {
				pause(w.ctx, 100*time.Millisecond)
				continue
			}
			rv = w.follow(events, rv, list, handle)
		}
	})
	return nil
}

// follow handles one watch's events and returns the last version seen.
func (w *world) follow(events watch.Interface, rv string, list client.ObjectList, handle func(watch.EventType, client.Object)) string {
	defer events.Stop()
	for {
		select {
		case <-w.ctx.Done():
			return rv
		case ev, ok := <-events.ResultChan():
			if !ok {
				return rv
			}
			switch ev.Type {
			case watch.Error:
				// 410 Gone: the history since rv is lost; the invariants
				// would be checked on a partial record.
				w.faults.add("", "watch of %T from version %s failed: %v", list, rv, apierrors.FromObject(ev.Object))
				return rv
			case watch.Bookmark:
				rv = ev.Object.(client.Object).GetResourceVersion()
			default:
				obj := ev.Object.(client.Object)
				rv = obj.GetResourceVersion()
				handle(ev.Type, obj)
			}
		}
	}
}

func (w *world) onRayJob(t watch.EventType, obj client.Object) {
	job := obj.(*rayv1.RayJob)
	w.rec.rayJob(t, job)
	if t == watch.Deleted {
		enqueue(w.ctx, w.gc, job.UID)
	}
}

func (w *world) onRayCluster(t watch.EventType, obj client.Object) {
	cluster := obj.(*rayv1.RayCluster)
	w.rec.rayCluster(t, cluster)
	if t == watch.Deleted {
		w.dash.down(cluster.Name)
		enqueue(w.ctx, w.gc, cluster.UID)
	}
}

func (w *world) onJob(t watch.EventType, obj client.Object) {
	w.rec.job(t, obj.(*batchv1.Job))
}

func (w *world) onPod(t watch.EventType, obj client.Object) {
	pod := obj.(*corev1.Pod)
	w.rec.pod(t, pod)
	if t != watch.Deleted && pending(pod) {
		enqueue(w.ctx, w.kubelet, client.ObjectKeyFromObject(pod))
	}
}

// pending reports a Pod no kubelet has started yet.
func pending(pod *corev1.Pod) bool {
	return (pod.Status.Phase == "" || pod.Status.Phase == corev1.PodPending) && pod.DeletionTimestamp.IsZero()
}

// enqueue hands item to a stand-in's queue unless the world is stopping.
func enqueue[T any](ctx context.Context, queue chan<- T, item T) {
	select {
	case queue <- item:
	case <-ctx.Done():
	}
}

// runKubelet plays the kubelet: a new Pod becomes Running and Ready, and
// once a head Pod runs, its cluster's dashboard answers.
func (w *world) runKubelet() {
	for {
		select {
		case <-w.ctx.Done():
			return
		case key := <-w.kubelet:
			pod := &corev1.Pod{}
			if err := w.c.Get(w.ctx, key, pod); err != nil || !pending(pod) {
				continue
			}
			if err := testenv.MarkPodsRunningReady(w.ctx, w.c, pod); err != nil {
				continue // deleted meanwhile
			}
			if pod.Labels[rayv1.LabelNodeType] == string(rayv1.HeadNode) {
				w.dash.up(pod.Labels[rayv1.LabelCluster])
			}
		}
	}
}

// runGarbageCollector plays the garbage collector (envtest runs no
// kube-controller-manager): once an owner is gone, its dependents are
// deleted in the background, as for kubectl's default propagation.
func (w *world) runGarbageCollector() {
	for {
		select {
		case <-w.ctx.Done():
			return
		case uid := <-w.gc:
			for _, list := range []client.ObjectList{&rayv1.RayClusterList{}, &batchv1.JobList{}, &corev1.PodList{}, &corev1.ServiceList{}} {
				w.deleteDependents(uid, list)
			}
		}
	}
}

func (w *world) deleteDependents(owner types.UID, list client.ObjectList) {
	if err := w.c.List(w.ctx, list, client.InNamespace(w.ns)); err != nil {
		return
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return
	}
	for _, item := range items {
		obj := item.(client.Object)
		for _, ref := range obj.GetOwnerReferences() {
			if ref.UID == owner {
				_ = w.c.Delete(w.ctx, obj, client.PropagationPolicy(metav1.DeletePropagationBackground))
			}
		}
	}
}

// pause waits d or until ctx ends.
func pause(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// submissionIDOf is the submission id a submitter Job submits under.
func submissionIDOf(job *batchv1.Job) string {
	for _, c := range job.Spec.Template.Spec.Containers {
		for _, env := range c.Env {
			if env.Name == submitter.EnvJobSubmissionID {
				return env.Value
			}
		}
	}
	return ""
}

// controllerOf is the name of obj's controller of kind, "" if none.
func controllerOf(obj client.Object, kind string) string {
	if ref := metav1.GetControllerOf(obj); ref != nil && ref.Kind == kind {
		return ref.Name
	}
	return ""
}
