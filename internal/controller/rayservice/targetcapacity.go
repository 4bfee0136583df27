package rayservice

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/incrementalupgrade"
	"github.com/ray-operator/ray-operator/internal/serveapps"
)

// stepTargetCapacity moves a cluster's Serve target_capacity one step
// during an incremental upgrade, once the Gateway and HTTPRoute are ready
// and traffic caught up with the last step. It PUTs the config last applied
// to that cluster with the new target_capacity, so capacity changes never
// carry a config change, records the value in status and says whether it
// stepped, or else how soon a step may be due (0: none is waited for).
func (r *Reconciler) stepTargetCapacity(ctx context.Context, s *scope, c *rayv1.RayCluster, dash serveApplier, active bool) (bool, time.Duration, error) {
	if !r.incrementalInProgress(s) || s.activeName() == "" || s.pendingName() == "" {
		return false, 0, nil
	}
	if err := r.loadTrafficObjects(ctx, s); err != nil {
		return false, 0, err
	}
	u := upgradeState(s)
	if u.Done() {
		return false, 0, nil
	}
	if !incrementalupgrade.GatewayReady(s.gateway) || !incrementalupgrade.RouteReady(s.route, s.gateway) {
		// Neither object is watched: look again for the gateway
		// controller's word.
		return false, r.opts.InFlightRequeue, nil
	}
	if u.Active.TargetCapacity == nil {
		u.Active.TargetCapacity = ptr.To[int32](100)
	}
	if u.Pending.TargetCapacity == nil {
		u.Pending.TargetCapacity = ptr.To[int32](0)
	}
	opts, err := incrementalupgrade.OptionsOf(&s.rs.Spec)
	if err != nil {
		return false, 0, err
	}
	goal, wait, ok := incrementalupgrade.NextTargetCapacity(u, opts, active, s.now)
	if !ok {
		return false, wait, nil
	}
	if err := r.applyTargetCapacity(ctx, s, c, dash, goal); err != nil {
		return false, 0, err
	}
	if active {
		u.Active.TargetCapacity = ptr.To(goal)
	} else {
		u.Pending.TargetCapacity = ptr.To(goal)
	}
	return true, 0, nil
}

// applyTargetCapacity PUTs the config last applied to c (the spec's when
// none was recorded in full) with target_capacity goal.
func (r *Reconciler) applyTargetCapacity(ctx context.Context, s *scope, c *rayv1.RayCluster, dash serveApplier, goal int32) error {
	config, ok := serveapps.RecordedConfig(c.Annotations[rayv1.AnnotationAppliedServeConfig])
	if !ok {
		config = s.rs.Spec.ServeConfigV2
	}
	body, err := serveapps.ConfigJSON(config, &goal)
	if err == nil {
		err = dash.UpdateDeployments(ctx, body)
	}
	if err != nil {
		r.events.Eventf(s.rs, nil, corev1.EventTypeWarning, reasonFailedToUpdateTargetCapacity, actionUpdate,
			"Failed to update target_capacity of serve applications to the RayCluster %s/%s: %v", c.Namespace, c.Name, err)
		return &serveCallError{reason: rayv1.FailedToUpdateTargetCapacity, err: err, noted: true,
			what: fmt.Sprintf("Failed to set target_capacity %d on the RayCluster %s/%s", goal, c.Namespace, c.Name)}
	}
	r.events.Eventf(s.rs, nil, corev1.EventTypeNormal, reasonUpdatedServeTargetCapacity, actionUpdate,
		"Updated target_capacity of serve applications to %d on the RayCluster %s/%s", goal, c.Namespace, c.Name)
	return nil
}
