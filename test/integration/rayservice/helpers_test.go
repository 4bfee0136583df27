package rayservice_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/dashboard/dashboardtest"
	"github.com/ray-operator/ray-operator/internal/naming"
)

// podLabel reads one label of a Pod ("" when the Pod is missing).
func podLabel(w *world, name, key string) string {
	w.t.Helper()
	pod := &corev1.Pod{}
	if err := w.c.Get(context.Background(), types.NamespacedName{Namespace: w.ns, Name: name}, pod); err != nil {
		return ""
	}
	return pod.Labels[key]
}

// serving creates rs and takes it to Ready on its first cluster: the
// cluster comes up, its applications run, the Services select it, and the
// serve Service gets the endpoints of the Pods it selects. It returns the
// RayService as it then is.
func (w *world) serving(rs *rayv1.RayService) *rayv1.RayService {
	w.t.Helper()
	w.create(rs)
	got := w.waitStatus(rs.Name, "a pending cluster", func(st *rayv1.RayServiceStatuses) bool {
		return st.PendingServiceStatus.RayClusterName != ""
	})
	cluster := got.Status.PendingServiceStatus.RayClusterName
	w.waitCluster(cluster)
	w.bringUp(cluster)
	w.waitStatus(rs.Name, "promotion of "+cluster, func(st *rayv1.RayServiceStatuses) bool {
		return st.ActiveServiceStatus.RayClusterName == cluster
	})
	svc := serveServiceOf(rs)
	w.eventually("the head Pod of "+cluster+" labelled for serving", func() (bool, error) {
		return podLabel(w, cluster+"-head", rayv1.LabelServe) == "true", nil
	})
	w.syncEndpoints(svc)
	return w.waitCondition(rs.Name, rayv1.RayServiceReady, metav1.ConditionTrue, rayv1.NonZeroServeEndpoints)
}

// serveServiceOf is the name of a RayService's serve Service.
func serveServiceOf(rs *rayv1.RayService) string {
	if rs.Spec.ServeService != nil && rs.Spec.ServeService.Name != "" {
		return rs.Spec.ServeService.Name
	}
	return naming.ServeServiceName(rs.Name)
}

// waitCondition waits until a condition of the RayService has status and
// reason, and returns the RayService.
func (w *world) waitCondition(name string, t rayv1.RayServiceConditionType, status metav1.ConditionStatus,
	reason rayv1.RayServiceConditionReason) *rayv1.RayService {
	w.t.Helper()
	return w.waitStatus(name, fmt.Sprintf("%s %s/%s", t, status, reason), func(st *rayv1.RayServiceStatuses) bool {
		s, r := conditionOf(st, t)
		return s == status && r == string(reason)
	})
}

// waitObserved waits until the RayService's status describes its current
// generation: the controller has run a pass on the spec the test wrote
// last. It is the signal after which a test may check what that pass did
// not do.
func (w *world) waitObserved(name string) *rayv1.RayService {
	w.t.Helper()
	var rs *rayv1.RayService
	w.eventually("RayService "+name+" observed", func() (bool, error) {
		rs = w.rs(name)
		if rs == nil {
			return false, fmt.Errorf("gone")
		}
		return rs.Status.ObservedGeneration == rs.Generation, fmt.Errorf("observedGeneration %d, generation %d", rs.Status.ObservedGeneration, rs.Generation)
	})
	return rs
}

// editSpec changes a RayService's spec and returns its new generation.
func (w *world) editSpec(name string, mutate func(*rayv1.RayService)) int64 {
	w.t.Helper()
	rs := &rayv1.RayService{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: w.ns}}
	w.update(rs, false, func() { mutate(rs) })
	return rs.Generation
}

// editCluster changes a RayCluster (its spec and metadata, not its status).
func (w *world) editCluster(name string, mutate func(*rayv1.RayCluster)) {
	w.t.Helper()
	c := &rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: w.ns}}
	w.update(c, false, func() { mutate(c) })
}

// allClusters lists the names of every RayCluster of the namespace,
// terminating ones included, sorted.
func (w *world) allClusters() []string {
	w.t.Helper()
	list := &rayv1.RayClusterList{}
	w.List(list)
	names := make([]string, 0, len(list.Items))
	for _, c := range list.Items {
		names = append(names, c.Name)
	}
	slices.Sort(names)
	return names
}

// waitClusterGone waits until a RayCluster no longer exists.
func (w *world) waitClusterGone(name string) {
	w.t.Helper()
	w.eventually("RayCluster "+name+" gone", func() (bool, error) {
		return w.cluster(name) == nil, nil
	})
}

// blockDeletion puts a finalizer of the test's on a RayCluster, so that a
// deleted cluster stays terminating until releaseDeletion.
func (w *world) blockDeletion(cluster string) {
	w.t.Helper()
	w.editCluster(cluster, func(c *rayv1.RayCluster) { controllerutil.AddFinalizer(c, testFinalizer) })
}

// releaseDeletion removes the test's finalizer from a RayCluster.
func (w *world) releaseDeletion(cluster string) {
	w.t.Helper()
	w.editCluster(cluster, func(c *rayv1.RayCluster) { controllerutil.RemoveFinalizer(c, testFinalizer) })
}

const testFinalizer = "test.ray.io/block-deletion"

// deadlineOf waits for a cluster's deletion deadline and returns it.
func (w *world) deadlineOf(cluster string) time.Time {
	w.t.Helper()
	var deadline time.Time
	w.eventually("the deletion deadline of "+cluster, func() (bool, error) {
		c := w.cluster(cluster)
		if c == nil {
			return false, nil
		}
		var err error
		deadline, err = time.Parse(time.RFC3339, c.Annotations[rayv1.AnnotationDeletionDeadline])
		return err == nil, err
	})
	return deadline
}

// configsOn returns every serve config PUT on a cluster's dashboard.
func (w *world) configsOn(cluster string) [][]byte {
	return w.serve.Configs(dashboardtest.URLFor(cluster, w.ns))
}

// waitConfigs waits until a cluster's dashboard received n configs.
func (w *world) waitConfigs(cluster string, n int) [][]byte {
	w.t.Helper()
	var got [][]byte
	w.eventually(fmt.Sprintf("%d serve configs on %s", n, cluster), func() (bool, error) {
		got = w.configsOn(cluster)
		return len(got) == n, fmt.Errorf("%d configs", len(got))
	})
	return got
}

// setAppStatus sets the status of a Serve application on a cluster.
func (w *world) setAppStatus(cluster, app, status string) {
	w.serve.SetAppStatus(dashboardtest.URLFor(cluster, w.ns), app, status)
}

// setProxyHealthy makes the Serve proxy of a head Pod answer or fail.
func (w *world) setProxyHealthy(pod string, healthy bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.unhealthy[pod] = !healthy
}

// syncEndpoints plays the EndpointSlice controller for a Service: its slice
// lists the running, ready Pods its selector selects (none when it selects
// nothing), and is created or replaced; the slice of a Service that no
// longer exists is deleted (by garbage collection in a real cluster).
func (w *world) syncEndpoints(svcName string) []discoveryv1.Endpoint {
	w.t.Helper()
	svc := w.service(svcName)
	if svc == nil {
		slice := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: svcName + "-slice", Namespace: w.ns}}
		if err := w.c.Delete(context.Background(), slice); client.IgnoreNotFound(err) != nil {
			w.t.Fatal(err)
		}
		return nil
	}
	pods := &corev1.PodList{}
	if err := w.c.List(context.Background(), pods, client.InNamespace(w.ns),
		client.MatchingLabelsSelector{Selector: labels.SelectorFromSet(svc.Spec.Selector)}); err != nil {
		w.t.Fatal(err)
	}
	var endpoints []discoveryv1.Endpoint
	for _, p := range pods.Items {
		if p.DeletionTimestamp.IsZero() && p.Status.PodIP != "" && podReady(&p) {
			endpoints = append(endpoints, discoveryv1.Endpoint{
				Addresses:  []string{p.Status.PodIP},
				Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)},
				TargetRef:  &corev1.ObjectReference{Kind: "Pod", Name: p.Name, Namespace: p.Namespace, UID: p.UID},
			})
		}
	}
	w.putEndpointSlice(svc, endpoints)
	return endpoints
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// putEndpointSlice creates or replaces the one EndpointSlice of svc,
// labelled as the Service is.
func (w *world) putEndpointSlice(svc *corev1.Service, endpoints []discoveryv1.Endpoint) {
	w.t.Helper()
	labels := map[string]string{discoveryv1.LabelServiceName: svc.Name}
	for k, v := range svc.Labels {
		labels[k] = v
	}
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: svc.Name + "-slice", Namespace: w.ns},
		AddressType: discoveryv1.AddressTypeIPv4,
	}
	w.eventually("EndpointSlice of "+svc.Name, func() (bool, error) {
		err := w.c.Get(context.Background(), client.ObjectKeyFromObject(slice), slice)
		if client.IgnoreNotFound(err) != nil {
			return false, err
		}
		slice.Labels, slice.Endpoints = labels, endpoints
		if apierrors.IsNotFound(err) {
			err = w.c.Create(context.Background(), slice)
		} else {
			err = w.c.Update(context.Background(), slice)
		}
		return err == nil, err
	})
}

// newHeadPod creates a running, ready head Pod for a cluster, as the
// RayCluster controller does when it replaces a lost head: the serve label
// starts "false".
func (w *world) newHeadPod(cluster, name string) {
	w.t.Helper()
	head := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
			rayv1.LabelCluster: cluster, rayv1.LabelNodeType: string(rayv1.HeadNode), rayv1.LabelServe: "false",
		}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "ray-head", Image: "rayproject/ray:2.60.0"}}},
	}
	w.create(head)
	w.markRunningReady(head)
}

// events returns the events recorded about a RayService with reason.
func (w *world) events(rsName, reason string) []eventsv1.Event {
	w.t.Helper()
	return w.Events(rsName, reason)
}

// waitEvent waits for an event about a RayService with reason and returns
// it.
func (w *world) waitEvent(rsName, reason string) eventsv1.Event {
	w.t.Helper()
	return w.WaitEvent(rsName, reason)
}

// statusHistory records, from now on, every status a RayService is
// written with (through a watch, so that states that last one pass are
// seen too). The returned function gives the statuses so far.
func (w *world) statusHistory(name string) func() []rayv1.RayServiceStatuses {
	w.t.Helper()
	wc, err := client.NewWithWatch(w.env.Config, client.Options{Scheme: w.env.Scheme})
	if err != nil {
		w.t.Fatal(err)
	}
	watcher, err := wc.Watch(context.Background(), &rayv1.RayServiceList{}, client.InNamespace(w.ns),
		client.MatchingFields{"metadata.name": name})
	if err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(watcher.Stop)
	var mu sync.Mutex
	var seen []rayv1.RayServiceStatuses
	go func() {
		for ev := range watcher.ResultChan() {
			if rs, ok := ev.Object.(*rayv1.RayService); ok && (ev.Type == watch.Added || ev.Type == watch.Modified) {
				mu.Lock()
				seen = append(seen, *rs.Status.DeepCopy())
				mu.Unlock()
			}
		}
	}()
	return func() []rayv1.RayServiceStatuses {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(seen)
	}
}

// historyUntil waits until the watched history holds a status that
// satisfies ok (the watch may lag a read of the object) and returns it.
func (w *world) historyUntil(history func() []rayv1.RayServiceStatuses, ok func(*rayv1.RayServiceStatuses) bool) []rayv1.RayServiceStatuses {
	w.t.Helper()
	var seen []rayv1.RayServiceStatuses
	w.eventually("the watched status history to catch up", func() (bool, error) {
		seen = history()
		return firstIndex(seen, ok) >= 0, nil
	})
	return seen
}

// firstIndex is the index of the first status in history that satisfies
// ok, or -1.
func firstIndex(history []rayv1.RayServiceStatuses, ok func(*rayv1.RayServiceStatuses) bool) int {
	for i := range history {
		if ok(&history[i]) {
			return i
		}
	}
	return -1
}

// hasCondition reports whether st has a condition with status and reason.
func hasCondition(st *rayv1.RayServiceStatuses, t rayv1.RayServiceConditionType, status metav1.ConditionStatus,
	reason rayv1.RayServiceConditionReason) bool {
	s, r := conditionOf(st, t)
	return s == status && r == string(reason)
}

// clusterNamesOf are the active and pending cluster names in a status,
// for messages.
func clusterNamesOf(st *rayv1.RayServiceStatuses) string {
	return strings.Join([]string{"active=" + st.ActiveServiceStatus.RayClusterName, "pending=" + st.PendingServiceStatus.RayClusterName}, " ")
}

// withImage sets the image of every container of a RayService's cluster.
func withImage(image string) func(*rayv1.RayService) {
	return func(rs *rayv1.RayService) {
		spec := &rs.Spec.RayClusterSpec
		for i := range spec.HeadGroupSpec.Template.Spec.Containers {
			spec.HeadGroupSpec.Template.Spec.Containers[i].Image = image
		}
		for g := range spec.WorkerGroupSpecs {
			for i := range spec.WorkerGroupSpecs[g].Template.Spec.Containers {
				spec.WorkerGroupSpecs[g].Template.Spec.Containers[i].Image = image
			}
		}
	}
}

// headImage is the image of a cluster's head container.
func headImage(c *rayv1.RayCluster) string {
	return c.Spec.HeadGroupSpec.Template.Spec.Containers[0].Image
}

// secondApp is serveConfigV2 with a second application.
const secondApp = "  - name: second\n    import_path: b:b\n    route_prefix: /b\n"

// warnings lists the Warning events recorded about a RayService, as
// "reason: note".
func (w *world) warnings(rsName string) []string {
	w.t.Helper()
	var out []string
	for _, e := range w.Events(rsName, "") {
		if e.Type == corev1.EventTypeWarning {
			out = append(out, e.Reason+": "+e.Note)
		}
	}
	return out
}
