package rayservice

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/childwrite"
	"github.com/ray-operator/ray-operator/internal/clusterindex"
	"github.com/ray-operator/ray-operator/internal/conditions"
	"github.com/ray-operator/ray-operator/internal/features"
	"github.com/ray-operator/ray-operator/internal/passsteps"
	"github.com/ray-operator/ray-operator/internal/podstatus"
	"github.com/ray-operator/ray-operator/internal/serveapps"
)

// reconcileServeLabels sets ray.io/serve on the head Pods of the active and
// pending clusters: "true" while the head's Serve proxy is healthy, so the
// serve Service sends it traffic, "false" otherwise or when
// excludeHeadPodFromServeSvc is set. (Workers get ray.io/serve=true from the
// Pod builder and leave the Service through their readiness probe.) A
// missing head Pod is waited for; it does not stop the pass. A proxy check
// in a back-off brings a pass when the back-off ends.
func (r *Reconciler) reconcileServeLabels(ctx context.Context, s *scope) (passsteps.Result, error) {
	var res passsteps.Result
	for _, c := range []*rayv1.RayCluster{s.active, s.pending} {
		if c == nil {
			continue
		}
		head, err := r.headPod(ctx, c)
		if err != nil {
			return res, err
		}
		if head == nil {
			ctrl.LoggerFrom(ctx).Info("The RayCluster has no head Pod yet", "rayCluster", c.Name)
			res = res.Merge(passsteps.Requeue(r.opts.InFlightRequeue))
			continue
		}
		s.heads[c.Name] = head
		if err := r.setServeLabel(ctx, s, c, head); err != nil {
			return res, err
		}
	}
	return res.Merge(passsteps.Requeue(r.serveRetry(s))), nil
}

// headPod returns the head Pod of a cluster that is not terminating, or nil.
func (r *Reconciler) headPod(ctx context.Context, c *rayv1.RayCluster) (*corev1.Pod, error) {
	pods, err := clusterindex.HeadPods(ctx, r.Client, c)
	if err != nil {
		return nil, err
	}
	for i := range pods {
		if pods[i].DeletionTimestamp.IsZero() {
			return &pods[i], nil
		}
	}
	return nil, nil
}

// setServeLabel writes the head Pod's ray.io/serve label when it changes.
// A head Pod that is not Ready gets "false" without a proxy check: its
// container may be restarting (the GCS killed), and a proxy check made
// before the old proxy went down would leave "true" on it, so that the
// moment the new container turns Ready, before its Serve proxy listens,
// the serve Service would send it requests that are refused. With "false"
// it joins the Service only after a check of the new proxy passes.
func (r *Reconciler) setServeLabel(ctx context.Context, s *scope, c *rayv1.RayCluster, head *corev1.Pod) error {
	rs := s.rs
	want := "false"
	if !rs.Spec.ExcludeHeadPodFromServeSvc && podstatus.Ready(head) {
		want = strconv.FormatBool(r.proxyHealthy(ctx, s, c, head))
	}
	if head.Labels[rayv1.LabelServe] == want {
		return nil
	}
	before := head.DeepCopy()
	if head.Labels == nil {
		head.Labels = map[string]string{}
	}
	head.Labels[rayv1.LabelServe] = want
	noun := fmt.Sprintf("the serve label to %q for the Head Pod %s/%s", want, head.Namespace, head.Name)
	return client.IgnoreNotFound(r.Children().Patch(ctx, rs, head, client.MergeFrom(before),
		childwrite.Noted(childwrite.Patch, noun, reasonUpdatedHeadPodServeLabel, reasonFailedToUpdateHeadPodServeLabel)))
}

// proxyHealthy checks the Serve proxy of a cluster's head Pod. A proxy that
// fails after it had answered (the label says so) is a failed request (see
// servefaults.go): an event, the condition, and no new check before its
// back-off ends, the head staying out of the serve Service meanwhile. One
// that never answered yet is only starting (Serve starts its proxies when
// applications are deployed): it is checked on every pass, as KubeRay does,
// with no event.
func (r *Reconciler) proxyHealthy(ctx context.Context, s *scope, c *rayv1.RayCluster, head *corev1.Pod) bool {
	key := serveKey(s.rs, callServeProxy, c.Name, string(head.UID))
	if !r.mayCall(s, key) {
		return false
	}
	err := r.ProxyHealth(ctx, head, rayv1.ServePort(&c.Spec))
	if err == nil {
		r.serveSucceeded(key)
		return true
	}
	if _, failing := r.serveBackoff.Failing(key); failing || head.Labels[rayv1.LabelServe] == "true" {
		r.serveFailed(s, key, &serveCallError{reason: rayv1.FailedServeProxyHealthCheck, err: err,
			what: fmt.Sprintf("The Serve proxy of the head Pod %s/%s of RayCluster %s failed its health check", head.Namespace, head.Name, c.Name)})
	}
	return false
}

// reconcileServe deploys serveConfigV2 and reads the application statuses:
// on the pending cluster when there is one; on the active cluster only when
// no new cluster is being prepared, so that a config meant for the new
// cluster never reaches the old one (and, during a blue/green upgrade, the
// active cluster's applications are not shown). With an incremental upgrade
// both clusters are followed. It ends with the ServeRequestsFailing
// condition of the requests the pass made; a request in a back-off brings
// a pass when the back-off ends.
func (r *Reconciler) reconcileServe(ctx context.Context, s *scope) (passsteps.Result, error) {
	res, err := r.serveClusters(ctx, s)
	if err != nil {
		return res, err
	}
	r.setServeRequestsCondition(s)
	return res.Merge(passsteps.Requeue(r.serveRetry(s))), nil
}

// serveClusters runs serveCluster on the clusters reconcileServe follows.
func (r *Reconciler) serveClusters(ctx context.Context, s *scope) (passsteps.Result, error) {
	incremental := r.incrementalEnabled(s.rs)
	var pending clusterServe
	if s.pending != nil {
		var err error
		if pending, err = r.serveCluster(ctx, s, s.pending, false); err != nil {
			return passsteps.Result{}, err
		}
		s.rs.Status.PendingServiceStatus.Applications, s.pendingReady = pending.apps, pending.ready
	}
	res := passsteps.Requeue(pending.requeue)
	if s.active == nil {
		// The active cluster is gone (deleted under the RayService): its
		// applications no longer run anywhere, so they are not shown.
		s.rs.Status.ActiveServiceStatus.Applications = nil
		return res, nil
	}
	if (s.pending != nil || s.prepareNew) && !incremental {
		s.rs.Status.ActiveServiceStatus.Applications = nil
		return res, nil
	}
	active, err := r.serveCluster(ctx, s, s.active, true)
	if err != nil {
		return passsteps.Result{}, err
	}
	s.rs.Status.ActiveServiceStatus.Applications, s.activeReady = active.apps, active.ready
	return res.Merge(passsteps.Requeue(active.requeue)), nil
}

// clusterServe is what serveCluster found of one cluster's applications.
type clusterServe struct {
	// apps are the applications' statuses.
	apps map[string]rayv1.AppStatus
	// ready says every application is RUNNING.
	ready bool
	// requeue asks for another pass within it while the cluster is still
	// coming up or was just given a config (0: no need).
	requeue time.Duration
}

// serveCluster brings one cluster's applications to serveConfigV2 and
// returns their statuses and whether all are RUNNING. A cluster whose head
// is not ready yet is waited for. While its Serve API fails (or backs off)
// the cluster is not ready and keeps the statuses last seen.
func (r *Reconciler) serveCluster(ctx context.Context, s *scope, c *rayv1.RayCluster, active bool) (clusterServe, error) {
	if !r.headReady(c, s.heads[c.Name]) {
		return clusterServe{requeue: r.opts.InFlightRequeue}, nil
	}
	key := serveKey(s.rs, callServeAPI, c.Name)
	if !r.mayCall(s, key) {
		s.activeServeUnknown = s.activeServeUnknown || active
		return clusterServe{apps: lastApps(s, c, active)}, nil
	}
	got := clusterServe{}
	apps, requeue, err := r.syncServe(ctx, s, c, active)
	got.requeue = requeue
	var failure *serveCallError
	switch {
	case errors.As(err, &failure):
		r.serveFailed(s, key, failure)
		s.activeServeUnknown = s.activeServeUnknown || active
		got.apps = apps
		if apps == nil {
			got.apps = lastApps(s, c, active)
		}
		return got, nil
	case err != nil:
		return clusterServe{}, err
	}
	r.serveSucceeded(key)
	got.apps, got.ready = apps, serveapps.AllRunning(apps)
	if !got.ready {
		got.requeue = passsteps.Sooner(got.requeue, r.opts.InFlightRequeue)
	}
	return got, nil
}

// syncServe reads a cluster's applications, PUTs serveConfigV2 when it
// must, and steps its target_capacity; it says how soon to look again: at
// the in-flight interval when it PUT anything, else when a capacity step
// waits (0: nothing to wait for). A failed request to Serve is a
// *serveCallError (with the statuses when the read succeeded).
func (r *Reconciler) syncServe(ctx context.Context, s *scope, c *rayv1.RayCluster, active bool) (map[string]rayv1.AppStatus, time.Duration, error) {
	dash, err := r.dashboards.Client(ctx, c, "")
	if err != nil {
		return nil, 0, err
	}
	details, err := dash.GetServeDetails(ctx)
	if err != nil {
		return nil, 0, &serveCallError{reason: rayv1.FailedToGetServeApplications, err: err,
			what: fmt.Sprintf("Failed to get the Serve applications of the RayCluster %s/%s", c.Namespace, c.Name)}
	}
	apps := serveapps.Statuses(details)
	applied := false
	if r.mayApplyConfig(s, active) {
		apply, err := r.needsApply(ctx, s, c, len(apps))
		if err != nil {
			return nil, 0, err
		}
		if apply {
			if err := r.applyServeConfig(ctx, s, c, dash, targetCapacity(s, active)); err != nil {
				return apps, 0, err
			}
			applied = true
		}
	}
	stepped, wait, err := r.stepTargetCapacity(ctx, s, c, dash, active)
	if applied || stepped {
		wait = passsteps.Sooner(wait, r.opts.InFlightRequeue)
	}
	return apps, wait, err
}

// lastApps are the application statuses status last showed for a cluster.
func lastApps(s *scope, c *rayv1.RayCluster, active bool) map[string]rayv1.AppStatus {
	last := s.original.PendingServiceStatus
	if active {
		last = s.original.ActiveServiceStatus
	}
	if last.RayClusterName != c.Name {
		return nil
	}
	return last.Applications
}

// needsApply reports whether serveConfigV2 must be PUT on c, given the
// number of applications Serve runs. When the config recorded on c says
// so, the record is read again from the API server: c comes from the
// cache, which can still lack the record a pass wrote a moment ago, and
// would make the next pass PUT the same config again.
func (r *Reconciler) needsApply(ctx context.Context, s *scope, c *rayv1.RayCluster, apps int) (bool, error) {
	want := s.rs.Spec.ServeConfigV2
	if !serveapps.NeedsApply(c.Annotations[rayv1.AnnotationAppliedServeConfig], want, apps) {
		return false, nil
	}
	live := &rayv1.RayCluster{}
	if err := r.LiveReader.Get(ctx, client.ObjectKeyFromObject(c), live); err != nil {
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return false, fmt.Errorf("reading RayCluster %s: %w", c.Name, err)
	}
	return serveapps.NeedsApply(live.Annotations[rayv1.AnnotationAppliedServeConfig], want, apps), nil
}

// headReady reports whether a cluster's head can take Serve requests: its
// HeadPodReady condition with the RayClusterStatusConditions gate, else the
// head Pod running and ready.
func (r *Reconciler) headReady(c *rayv1.RayCluster, head *corev1.Pod) bool {
	if r.opts.Features.Enabled(features.RayClusterStatusConditions) {
		return conditions.IsTrue(c.Status.Conditions, rayv1.HeadPodReady)
	}
	return podstatus.RunningAndReady(head)
}

// applyServeConfig PUTs serveConfigV2 on a cluster and records it there.
func (r *Reconciler) applyServeConfig(ctx context.Context, s *scope, c *rayv1.RayCluster, dash serveApplier, tc *int32) error {
	body, err := serveapps.ConfigJSON(s.rs.Spec.ServeConfigV2, tc)
	if err != nil {
		return err
	}
	if err := dash.UpdateDeployments(ctx, body); err != nil {
		r.events.Eventf(s.rs, nil, corev1.EventTypeWarning, reasonFailedToUpdateServeApplications, actionUpdate,
			"Failed to update serve applications to the RayCluster %s/%s: %v", c.Namespace, c.Name, err)
		return &serveCallError{reason: rayv1.FailedToUpdateServeApplications, err: err, noted: true,
			what: fmt.Sprintf("Failed to update serve applications to the RayCluster %s/%s (see Issue 5 of the RayService troubleshooting guide)", c.Namespace, c.Name)}
	}
	r.events.Eventf(s.rs, nil, corev1.EventTypeNormal, reasonUpdatedServeApplications, actionUpdate,
		"Updated serve applications to the RayCluster %s/%s", c.Namespace, c.Name)
	return r.patchClusterAnnotation(ctx, s.rs, c, rayv1.AnnotationAppliedServeConfig, serveapps.Record(s.rs.Spec.ServeConfigV2))
}

// serveApplier is the part of a dashboard client that applies configs.
type serveApplier interface {
	UpdateDeployments(ctx context.Context, configJSON []byte) error
}
