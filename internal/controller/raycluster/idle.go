package raycluster

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/conditions"
	"github.com/ray-operator/ray-operator/internal/dashboard"
	"github.com/ray-operator/ray-operator/internal/passsteps"
)

// Idle termination (spec.idleTerminationOptions) ends a standalone cluster
// whose dashboard has shown no pending or running job or driver for
// timeoutSeconds. The dashboard is looked at by a background probe
// (dashboard.ActivityProbe); a pass only reads its last report. The
// RayClusterIdle condition holds the state that must outlive a restart:
// true since (lastTransitionTime) the idleness began. A report that is not
// in yet leaves the condition alone, so a restart does not reset the
// timer; a dashboard that cannot be read makes it Unknown, which does.

// Reasons of the RayClusterIdle condition and of the idle events.
const (
	reasonNoActiveJobs         = "NoActiveJobs"
	reasonJobsActive           = "JobsActive"
	reasonDashboardUnreadable  = "DashboardUnreadable"
	reasonIdleTimeoutExceeded  = "IdleTimeoutExceeded"
	reasonIdleSuspended        = "IdleSuspended"
	reasonIdleDeleted          = "IdleDeleted"
	reasonFailedToEndIdle      = "FailedToEndIdleCluster"
	actionEndIdle              = "EndIdleCluster"
	idleTimeoutExceededMessage = "No job or driver was pending or running for %ds: the cluster was %s (idleTerminationOptions)"
)

// idleWatched says whether the idle check applies to the cluster: it asks
// for it, no RayJob or RayService owns it, and it is up and not suspended.
func idleWatched(cluster *rayv1.RayCluster) bool {
	return cluster.Spec.IdleTerminationOptions != nil && !ownedByRayWorkload(cluster) &&
		!specSuspended(cluster) && suspendState(cluster) == "" && cluster.Status.State == rayv1.Ready
}

// ownedByRayWorkload says a RayJob or a RayService made the cluster.
func ownedByRayWorkload(cluster *rayv1.RayCluster) bool {
	switch cluster.Labels[rayv1.LabelOriginatedFromCRD] {
	case rayv1.KindRayJob, rayv1.KindRayService:
		return true
	}
	for _, ref := range cluster.OwnerReferences {
		if ref.APIVersion == rayv1.GroupVersion.String() && (ref.Kind == rayv1.KindRayJob || ref.Kind == rayv1.KindRayService) {
			return true
		}
	}
	return false
}

// idleVerdict is the RayClusterIdle condition a report leads to (nil:
// leave it as it is) and whether the cluster has been idle past its
// threshold at now.
func idleVerdict(conds []metav1.Condition, report dashboard.ActivityReport, timeout time.Duration, now time.Time) (*metav1.Condition, bool) {
	if report.At.IsZero() {
		return nil, false
	}
	c := &metav1.Condition{Type: string(rayv1.RayClusterIdle), Message: report.Detail, LastTransitionTime: metav1.NewTime(now)}
	switch report.Activity {
	case dashboard.ActivityBusy:
		c.Status, c.Reason = metav1.ConditionFalse, reasonJobsActive
		return c, false
	case dashboard.ActivityUnknown:
		c.Status, c.Reason = metav1.ConditionUnknown, reasonDashboardUnreadable
		return c, false
	}
	c.Status, c.Reason = metav1.ConditionTrue, reasonNoActiveJobs
	since := now
	if old := conditions.Get(conds, rayv1.RayClusterIdle); old != nil &&
		old.Status == metav1.ConditionTrue && old.Reason == reasonNoActiveJobs {
		since = old.LastTransitionTime.Time
	}
	c.LastTransitionTime = metav1.NewTime(since)
	return c, !now.Before(since.Add(timeout))
}

// reconcileIdle is the pass's first step: it stops or starts the probe,
// decides on its report, and ends a cluster idle past its threshold.
func (r *Reconciler) reconcileIdle(ctx context.Context, s *scope) (passsteps.Result, error) {
	key := types.NamespacedName{Namespace: s.cluster.Namespace, Name: s.cluster.Name}
	if r.activity == nil || !idleWatched(s.cluster) {
		if r.activity != nil {
			r.activity.Stop(key)
		}
		return passsteps.Result{}, nil
	}
	report := r.activity.Report(key, func() (dashboard.Client, error) {
		return r.dashboards.Client(ctx, s.cluster, "")
	})
	opts := s.cluster.Spec.IdleTerminationOptions
	cond, end := idleVerdict(s.cluster.Status.Conditions, report, time.Duration(opts.TimeoutSeconds)*time.Second, r.Clock.Now())
	s.idleCondition = cond
	if !end {
		return passsteps.Result{}, nil
	}
	return r.endIdle(ctx, s, key)
}

// endIdle suspends or deletes the cluster as its policy says, with an event
// and the condition saying why.
func (r *Reconciler) endIdle(ctx context.Context, s *scope, key types.NamespacedName) (passsteps.Result, error) {
	opts := s.cluster.Spec.IdleTerminationOptions
	var err error
	reason, done := reasonIdleSuspended, "suspended"
	if opts.Policy == rayv1.IdleTerminationDelete {
		reason, done = reasonIdleDeleted, "deleted"
		err = r.Client.Delete(ctx, s.cluster, client.Preconditions{UID: &s.cluster.UID})
	} else {
		patch := client.MergeFrom(s.cluster.DeepCopy())
		s.cluster.Spec.Suspend = ptr.To(true)
		err = r.Client.Patch(ctx, s.cluster, patch)
	}
	if err != nil {
		r.events.Eventf(s.cluster, nil, corev1.EventTypeWarning, reasonFailedToEndIdle, actionEndIdle,
			"Failed to end idle RayCluster %s/%s (policy %s): %v", s.cluster.Namespace, s.cluster.Name, opts.Policy, err)
		return passsteps.Result{}, fmt.Errorf("ending idle cluster: %w", err)
	}
	r.activity.Stop(key)
	msg := fmt.Sprintf(idleTimeoutExceededMessage, opts.TimeoutSeconds, done)
	r.events.Eventf(s.cluster, nil, corev1.EventTypeNormal, reason, actionEndIdle, "%s", msg)
	if r.Metrics != nil {
		r.Metrics.ObserveIdleEnded(s.cluster.Name, s.cluster.Namespace, string(opts.Policy))
	}
	s.idleCondition.Reason, s.idleCondition.Message = reasonIdleTimeoutExceeded, msg
	if opts.Policy == rayv1.IdleTerminationDelete {
		s.deleted = true
		return passsteps.Result{Stop: true}, nil
	}
	return passsteps.Result{}, r.recordIdleSuspension(ctx, s)
}

// recordIdleSuspension writes the IdleTimeoutExceeded condition at once,
// without waiting for the pass's status write: the spec change has bumped
// the resourceVersion that write is based on, and should it conflict, the
// next pass finds the cluster suspended and no longer decides on idleness,
// so the reason would be lost. A merge patch carries no resourceVersion.
func (r *Reconciler) recordIdleSuspension(ctx context.Context, s *scope) error {
	base := s.cluster.DeepCopy()
	setIdleCondition(&s.cluster.Status, s.cluster, s.idleCondition)
	if err := r.Client.Status().Patch(ctx, s.cluster, client.MergeFrom(base)); err != nil {
		return fmt.Errorf("recording the idle suspension in the status: %w", err)
	}
	return nil
}

// setIdleCondition writes the pass's verdict into the status; without
// idleTerminationOptions the condition is removed.
func setIdleCondition(status *rayv1.RayClusterStatus, cluster *rayv1.RayCluster, verdict *metav1.Condition) {
	if cluster.Spec.IdleTerminationOptions == nil {
		conditions.Remove(&status.Conditions, rayv1.RayClusterIdle)
		return
	}
	if verdict == nil {
		return
	}
	// A new idle period after an ended one starts its own clock.
	if old := conditions.Get(status.Conditions, rayv1.RayClusterIdle); old != nil && old.Reason == reasonIdleTimeoutExceeded &&
		verdict.Reason != reasonIdleTimeoutExceeded {
		conditions.Remove(&status.Conditions, rayv1.RayClusterIdle)
	}
	meta.SetStatusCondition(&status.Conditions, *verdict)
}

// idleEventsBuffer bounds the probe reports waiting for the controller; a
// report that finds the buffer full is dropped, and the next look of the
// same probe sends again.
const idleEventsBuffer = 1024

// initIdleProbe makes the dashboard probe of the idle check. No goroutine
// runs until a cluster with idleTerminationOptions is reconciled.
func (r *Reconciler) initIdleProbe() {
	if r.Dashboards == nil {
		r.Dashboards = dashboard.NewHTTPProvider()
	}
	r.dashboards = dashboard.Access{Secrets: r.LiveReader, Clients: r.Dashboards, ClusterDomain: r.opts.Pod.ClusterDomain, Proxy: r.KubeProxy}
	r.idleEvents = make(chan event.GenericEvent, idleEventsBuffer)
	r.activity = dashboard.NewActivityProbe(r.Clock, r.opts.IdleProbeInterval, r.opts.IdleProbeTimeout, func(key types.NamespacedName) {
		obj := &rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
		select {
		case r.idleEvents <- event.GenericEvent{Object: obj}:
		default:
		}
	})
}
