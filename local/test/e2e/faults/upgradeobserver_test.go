package faults_test

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/local/internal/e2eutil"
)

// upgradeInterval is how often the upgrade observer reads the RayService
// and the new cluster's head Pod; Ray's own view of the pending
// cluster's applications is read every serveInterval.
const (
	upgradeInterval = 100 * time.Millisecond
	serveInterval   = 500 * time.Millisecond
)

// clusterHistory is what the RayCluster watch saw of one cluster name.
type clusterHistory struct {
	uids []types.UID
	// deadlines are the distinct ray.io/deletion-deadline values seen, in
	// order; deletingAt is when the cluster was first seen with a
	// deletionTimestamp (or gone), goneAt when it was gone.
	deadlines          []string
	deletingAt, goneAt time.Time
}

// upgradeSnapshot is what the upgrade observer saw last.
type upgradeSnapshot struct {
	rs *rayv1.RayService
	// blue is the cluster serving before the upgrade; green any other
	// cluster of the namespace (the new one).
	blue, green string
	// greenHeadReady: the new cluster's head Pod is Ready (Ray's GCS and
	// dashboard answer, so the operator can deploy Serve); greenServing:
	// Ray's Serve API on the new cluster says the application is RUNNING.
	greenHeadReady, greenServing bool
	// blueDeleting: the old cluster has a deletionTimestamp or is gone.
	blueDeleting bool
	// greenWeight is the new cluster's serve Service's weight in the
	// RayService's HTTPRoute (incremental upgrades), or -1 before the
	// route names it; routeErr is why the route could not be read last.
	greenWeight int32
	routeErr    error
}

// upgradeObserver follows a RayService upgrade from outside: the
// RayService, every RayCluster of the namespace (through a watch, so that
// a cluster created and deleted between two looks is still counted), the
// new cluster's head Pod, and Ray Serve's own status on the new cluster.
type upgradeObserver struct {
	s      *suite
	ns     string
	mu     sync.Mutex
	last   upgradeSnapshot
	status string
	// progress holds the times the RayService's status or a RayCluster
	// changed: the operator's work becoming visible.
	progress []time.Time
	clusters map[string]*clusterHistory
	// switchedAt is when the status first named the new cluster active
	// with no pending one.
	switchedAt time.Time
	// incremental: the RayService upgrades through its HTTPRoute, whose
	// distinct sets of weights routeSteps keeps in the order seen.
	incremental bool
	routeSteps  []routeStep
}

func newUpgradeObserver(s *suite, ns, blue string) *upgradeObserver {
	return &upgradeObserver{s: s, ns: ns, last: upgradeSnapshot{blue: blue, greenWeight: -1}, clusters: map[string]*clusterHistory{}}
}

// watchClusters records every RayCluster event of the namespace until ctx
// ends, starting from resourceVersion rv; a watch the server closes is
// opened again where it stopped.
func (o *upgradeObserver) watchClusters(ctx context.Context, wc client.WithWatch, rv string) {
	for ctx.Err() == nil {
		w, err := wc.Watch(ctx, &rayv1.RayClusterList{}, client.InNamespace(o.ns), &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: rv}})
		if err != nil {
			pause(ctx, upgradeInterval)
			continue
		}
		for ev := range w.ResultChan() {
			if rc, ok := ev.Object.(*rayv1.RayCluster); ok {
				rv = rc.ResourceVersion
				o.clusterEvent(ev.Type, rc)
			}
		}
		w.Stop()
	}
}

// clusterEvent records one watch event.
func (o *upgradeObserver) clusterEvent(typ watch.EventType, rc *rayv1.RayCluster) {
	now := time.Now()
	o.mu.Lock()
	defer o.mu.Unlock()
	h := o.clusters[rc.Name]
	if h == nil {
		h = &clusterHistory{}
		o.clusters[rc.Name] = h
	}
	if !slices.Contains(h.uids, rc.UID) {
		h.uids = append(h.uids, rc.UID)
	}
	if d := rc.Annotations[rayv1.AnnotationDeletionDeadline]; d != "" && !slices.Contains(h.deadlines, d) {
		h.deadlines = append(h.deadlines, d)
	}
	if (rc.DeletionTimestamp != nil || typ == watch.Deleted) && h.deletingAt.IsZero() {
		h.deletingAt = now
	}
	if typ == watch.Deleted {
		h.goneAt = now
	}
	if rc.Name != o.last.blue {
		o.last.green = rc.Name
	}
	if rc.Name == o.last.blue && !h.deletingAt.IsZero() {
		o.last.blueDeleting = true
	}
	o.progress = append(o.progress, now)
}

// run reads the RayService and the new cluster until ctx ends.
func (o *upgradeObserver) run(ctx context.Context) {
	nextServe := time.Now()
	ticker := time.NewTicker(upgradeInterval)
	defer ticker.Stop()
	for {
		o.lookRayService(ctx)
		green := o.snapshot().green
		if green != "" {
			o.lookHead(ctx, green)
			o.lookRoute(ctx, green)
			if !time.Now().Before(nextServe) {
				o.lookServe(ctx, green)
				nextServe = time.Now().Add(serveInterval)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}

// lookRayService reads the RayService and notes when its status changed
// and when it first said the new cluster serves alone.
func (o *upgradeObserver) lookRayService(ctx context.Context) {
	rs := &rayv1.RayService{}
	if err := o.s.Client.Get(ctx, types.NamespacedName{Namespace: o.ns, Name: e2eutil.HelloName}, rs); err != nil {
		return
	}
	status, _ := json.Marshal(rs.Status)
	now := time.Now()
	o.mu.Lock()
	defer o.mu.Unlock()
	if string(status) != o.status {
		o.progress = append(o.progress, now)
		o.status = string(status)
	}
	active := rs.Status.ActiveServiceStatus.RayClusterName
	if o.switchedAt.IsZero() && active != "" && active != o.last.blue && rs.Status.PendingServiceStatus.RayClusterName == "" {
		o.switchedAt = now
	}
	o.last.rs = rs
}

// lookHead notes whether the new cluster's head Pod is Ready.
func (o *upgradeObserver) lookHead(ctx context.Context, green string) {
	pods := &corev1.PodList{}
	err := o.s.Client.List(ctx, pods, client.InNamespace(o.ns), client.MatchingLabels{rayv1.LabelCluster: green, rayv1.LabelNodeType: string(rayv1.HeadNode)})
	ready := err == nil && len(pods.Items) > 0 && podReady(&pods.Items[0])
	o.mu.Lock()
	defer o.mu.Unlock()
	o.last.greenHeadReady = o.last.greenHeadReady || ready
}

// lookServe asks Ray Serve on the new cluster (its dashboard, through the
// API server's proxy) whether the application runs.
func (o *upgradeObserver) lookServe(ctx context.Context, green string) {
	rc := &rayv1.RayCluster{}
	if err := o.s.Client.Get(ctx, types.NamespacedName{Namespace: o.ns, Name: green}, rc); err != nil {
		return
	}
	c, err := o.s.proxy.Clients()(o.s.proxy.DashboardURL(rc), "")
	if err != nil {
		return
	}
	apps, err := c.GetMultiApplicationStatus(ctx)
	running := err == nil && apps[e2eutil.HelloName] != nil && apps[e2eutil.HelloName].Status == string(rayv1.ApplicationStatusRunning)
	o.mu.Lock()
	defer o.mu.Unlock()
	o.last.greenServing = o.last.greenServing || running
}

func (o *upgradeObserver) snapshot() upgradeSnapshot {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.last
}

// history returns a copy of what the watch saw, by cluster name.
func (o *upgradeObserver) history() map[string]clusterHistory {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := make(map[string]clusterHistory, len(o.clusters))
	for name, h := range o.clusters {
		out[name] = clusterHistory{uids: slices.Clone(h.uids), deadlines: slices.Clone(h.deadlines), deletingAt: h.deletingAt, goneAt: h.goneAt}
	}
	return out
}

// switched is when the status first said the new cluster serves alone.
func (o *upgradeObserver) switched() time.Time {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.switchedAt
}

// progressAfter is the first time after t that the operator's work became
// visible, or false.
func (o *upgradeObserver) progressAfter(t time.Time) (time.Time, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, p := range o.progress {
		if p.After(t) {
			return p, true
		}
	}
	return time.Time{}, false
}

// podReady: the Pod's Ready condition is True.
func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
