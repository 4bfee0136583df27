package rayservice

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/conditions"
	"github.com/ray-operator/ray-operator/internal/passsteps"
	"github.com/ray-operator/ray-operator/internal/validation"
)

// calculateStatus derives the status from what the pass observed: the
// clusters' own statuses, promotion of the pending cluster once the
// Services serve it, a new pending cluster when the spec asks for one, the
// serve endpoints and the conditions. It also decides when to look again.
func (r *Reconciler) calculateStatus(ctx context.Context, s *scope) (passsteps.Result, error) {
	st := &s.rs.Status
	now := metav1.Time{Time: s.now}
	st.ObservedGeneration = s.rs.Generation
	initConditions(s.rs, now)
	copyClusterStatus(&st.ActiveServiceStatus, s.active)
	copyClusterStatus(&st.PendingServiceStatus, s.pending)
	r.trafficStatus(s)
	r.completeRollback(s)
	r.promote(s)
	r.settleUpgradeAttempt(s)
	var res passsteps.Result
	if r.shouldPrepareNewCluster(s) {
		r.preparePendingCluster(s)
		res = passsteps.Requeue(r.opts.InFlightRequeue)
	}
	n, err := r.countServeEndpoints(ctx, s)
	if err != nil {
		return passsteps.Result{}, err
	}
	st.NumServeEndpoints = n
	setReady(s.rs, now)
	res = res.Merge(passsteps.Requeue(r.timeOutIfInitializingTooLong(s)))
	setUpgradeInProgress(s.rs, now)
	if s.rollbackCompleted {
		conditions.MarkFalse(&s.rs.Status.Conditions, rayv1.UpgradeInProgress, rayv1.NoPendingCluster, msgRollbackComplete, conditions.At(now, s.rs.Generation))
	}
	st.ServiceStatus = serviceStatus(s.rs)
	return res.Merge(passsteps.Requeue(r.requeueForStatus(s))), nil
}

// copyClusterStatus mirrors a cluster's status into the RayService's.
func copyClusterStatus(st *rayv1.RayServiceStatus, c *rayv1.RayCluster) {
	if c != nil && c.Name == st.RayClusterName {
		st.RayClusterStatus = c.Status
	}
}

// promote makes the pending cluster the active one once it serves: with a
// blue/green upgrade when the Services select it, with an incremental
// upgrade when all traffic and capacity moved to it (see incremental.go).
func (r *Reconciler) promote(s *scope) {
	st := &s.rs.Status
	if st.PendingServiceStatus.RayClusterName == "" {
		return
	}
	if r.incrementalEnabled(s.rs) {
		if !r.incrementalPromotionDue(s) {
			return
		}
	} else if s.servingCluster != st.PendingServiceStatus.RayClusterName {
		return
	}
	st.ActiveServiceStatus = st.PendingServiceStatus
	st.PendingServiceStatus = rayv1.RayServiceStatus{}
	s.active, s.pending = s.pending, nil
	s.activeReady, s.pendingReady = s.pendingReady, false
}

// preparePendingCluster names a new pending cluster "<rs>-<5 random>"; the
// next pass, which calculateStatus asks for soon, creates it.
func (r *Reconciler) preparePendingCluster(s *scope) {
	pending := rayv1.RayServiceStatus{RayClusterName: fmt.Sprintf("%s-%s", s.rs.Name, r.NameSuffix())}
	r.initPendingTraffic(s, &pending)
	s.rs.Status.PendingServiceStatus = pending
	s.pending = nil
}

// countServeEndpoints counts the distinct ready endpoints of the serve
// Services, from their EndpointSlices.
func (r *Reconciler) countServeEndpoints(ctx context.Context, s *scope) (int32, error) {
	seen := map[string]bool{}
	for _, name := range r.serveServiceNames(s) {
		slices := &discoveryv1.EndpointSliceList{}
		if err := r.Client.List(ctx, slices, client.InNamespace(s.rs.Namespace),
			client.MatchingLabels{discoveryv1.LabelServiceName: name}); err != nil {
			return 0, fmt.Errorf("listing the EndpointSlices of Service %s: %w", name, err)
		}
		for _, slice := range slices.Items {
			for _, ep := range slice.Endpoints {
				if key := endpointKey(ep); key != "" && ep.Conditions.Ready != nil && *ep.Conditions.Ready {
					seen[key] = true
				}
			}
		}
	}
	return int32(len(seen)), nil //nolint:gosec // a count of Pods
}

// endpointKey identifies an endpoint by its Pod, else by its first address.
func endpointKey(ep discoveryv1.Endpoint) string {
	if ep.TargetRef != nil && ep.TargetRef.UID != "" {
		return string(ep.TargetRef.UID)
	}
	if len(ep.Addresses) > 0 {
		return ep.Addresses[0]
	}
	return ""
}

// timeOutIfInitializingTooLong ends a RayService that stayed Initializing
// longer than its ray.io/initializing-timeout: the cluster names are
// cleared (the clusters are deleted after the deletion delay), Ready
// becomes False with reason InitializingTimeout for good, and a Warning
// event says so. Before the deadline it returns how long is left, to be
// looked at then (0: no deadline to wait for).
func (r *Reconciler) timeOutIfInitializingTooLong(s *scope) time.Duration {
	timeout, err := validation.InitializingTimeout(s.rs.Annotations)
	ready := conditions.Get(s.rs.Status.Conditions, rayv1.RayServiceReady)
	if err != nil || timeout == 0 || ready == nil || ready.Status != metav1.ConditionFalse || ready.Reason != string(rayv1.RayServiceInitializing) {
		return 0
	}
	spent := s.now.Sub(ready.LastTransitionTime.Time)
	if spent < timeout {
		return timeout - spent
	}
	s.rs.Status.ActiveServiceStatus = rayv1.RayServiceStatus{}
	s.rs.Status.PendingServiceStatus = rayv1.RayServiceStatus{}
	conditions.Remove(&s.rs.Status.Conditions, rayv1.ServeRequestsFailing)
	msg := fmt.Sprintf("RayService failed to become ready within the configured timeout of %s. Time spent initializing: %s",
		timeout, spent.Round(time.Second))
	conditions.MarkFalse(&s.rs.Status.Conditions, rayv1.RayServiceReady, rayv1.RayServiceInitializingTimeout, msg, conditions.At(metav1.Time{Time: s.now}, s.rs.Generation))
	r.events.Eventf(s.rs, nil, corev1.EventTypeWarning, reasonInitializingTimeout, actionReconcile, "%s", msg)
	return 0
}

// stopIfTimedOut ends the pass of a RayService that timed out initializing:
// that state is terminal (only deleting it, or a suspend and resume, leaves
// it). Its clusters are still cleaned up by the first step.
func (r *Reconciler) stopIfTimedOut(_ context.Context, s *scope) (passsteps.Result, error) {
	return passsteps.Result{Stop: conditions.Has(s.rs.Status.Conditions, rayv1.RayServiceReady, metav1.ConditionFalse, rayv1.RayServiceInitializingTimeout)}, nil
}

// requeueForStatus is when the next pass is due: soon while anything is in
// flight, else at the idle interval to refresh application statuses. A
// request to Serve in a back-off already asked for the pass that retries it
// (which also refreshes the statuses); an active cluster whose Serve API
// fails is not in flight for that alone, so that the retries keep to the
// back-off.
func (r *Reconciler) requeueForStatus(s *scope) time.Duration {
	st := &s.rs.Status
	inFlight := st.PendingServiceStatus.RayClusterName != "" || st.ActiveServiceStatus.RayClusterName == "" ||
		(!s.activeReady && !s.activeServeUnknown) || st.NumServeEndpoints == 0
	switch {
	case inFlight && !conditions.Has(s.rs.Status.Conditions, rayv1.RayServiceReady, metav1.ConditionFalse, rayv1.RayServiceInitializingTimeout):
		return r.opts.InFlightRequeue
	case r.serveRetry(s) == 0:
		return r.opts.IdleRequeue
	}
	return 0
}
