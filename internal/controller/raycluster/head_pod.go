package raycluster

import (
	"context"
	"errors"
	"fmt"
	"strings"

	ctrl "sigs.k8s.io/controller-runtime"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/conditions"
	"github.com/ray-operator/ray-operator/internal/expectations"
	"github.com/ray-operator/ray-operator/internal/raypod"
)

// reconcileHeadPod keeps exactly one healthy head Pod: it creates a missing
// one and deletes one that can no longer run (the next pass recreates it).
// More than one head is an error for the user to resolve: deleting a head
// on a guess could lose the cluster's state.
func (r *Reconciler) reconcileHeadPod(ctx context.Context, s *scope) error {
	if ok, err := r.groupSatisfied(ctx, s, expectations.HeadGroup); !ok {
		return err
	}
	snap, err := r.clusterPods(ctx, s)
	if err != nil {
		return err
	}
	heads := snap.matching(headPodLabels)
	switch len(heads) {
	case 0:
		if keepHeadDown(s.cluster) {
			ctrl.LoggerFrom(ctx).Info("Not recreating the head Pod of a provisioned cluster", "annotation", rayv1.AnnotationDisableProvisionedHeadRestart)
			return nil
		}
		pod, err := raypod.BuildHeadPod(s.cluster, r.opts.Pod)
		if err == nil {
			err = r.stampHeadPod(s.cluster, pod)
		}
		if err != nil {
			return errors.Join(errFailedCreateHeadPod, err)
		}
		return r.createPod(ctx, s, pod, expectations.HeadGroup, headPodEvents)
	case 1:
		head := &heads[0]
		remove, why := shouldDeletePod(head, rayv1.HeadNode)
		if !remove {
			return nil
		}
		if err := r.deletePod(ctx, s, head, expectations.HeadGroup, headPodEvents, why); err != nil {
			return err
		}
		// Stop here: workers are reconciled once the new head exists.
		return errors.New(why)
	default:
		names := make([]string, len(heads))
		for i := range heads {
			names[i] = heads[i].Name
		}
		return fmt.Errorf("%d head pods found %v. Please delete extra head pods", len(heads), names)
	}
}

// keepHeadDown: a RayJob in sidecar mode asks, with the annotation
// ray.io/disable-provisioned-head-restart, that a provisioned cluster's head
// is not recreated, since its job cannot be resubmitted to a new one.
func keepHeadDown(cluster *rayv1.RayCluster) bool {
	return strings.EqualFold(cluster.Annotations[rayv1.AnnotationDisableProvisionedHeadRestart], "true") &&
		conditions.IsTrue(cluster.Status.Conditions, rayv1.RayClusterProvisioned)
}
