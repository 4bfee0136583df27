package rayservice

import (
	"context"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/childwrite"
	"github.com/ray-operator/ray-operator/internal/passsteps"
)

// cleanUpClusters deletes the RayService's clusters that no longer serve:
// every cluster it created that is neither the active nor the pending one.
// Each gets a deletion deadline, now plus rayClusterDeletionDelaySeconds
// (60 s by default), recorded on the cluster itself so that an operator
// restart neither resets nor loses it; it is deleted once the deadline
// passed. A cluster that serves again (the spec went back to it) loses its
// deadline. The pending cluster of an upgrade abandoned after
// upgradeStrategy.pendingClusterTimeoutSeconds is deleted at once.
func (r *Reconciler) cleanUpClusters(ctx context.Context, s *scope) (passsteps.Result, error) {
	var res passsteps.Result
	clusters, err := r.clusters.List(ctx, s.rs, rayv1.KindRayService)
	if err != nil {
		return res, err
	}
	for i := range clusters {
		c := &clusters[i]
		if !c.DeletionTimestamp.IsZero() {
			continue
		}
		if c.Name == s.activeName() || c.Name == s.pendingName() {
			if err := r.setDeletionDeadline(ctx, s.rs, c, ""); err != nil {
				return res, err
			}
			continue
		}
		if abandonedCluster(s.rs, c) {
			if _, err := r.clusters.Delete(ctx, s.rs, client.ObjectKeyFromObject(c)); err != nil {
				return res, err
			}
			continue
		}
		wait, err := r.expireCluster(ctx, s, c)
		if err != nil {
			return res, err
		}
		res = res.Merge(passsteps.Requeue(wait))
	}
	return res, nil
}

// expireCluster records a deadline on a cluster that stopped serving, or
// deletes it once that deadline passed. It returns how soon to look again.
func (r *Reconciler) expireCluster(ctx context.Context, s *scope, c *rayv1.RayCluster) (time.Duration, error) {
	deadline, err := time.Parse(time.RFC3339, c.Annotations[rayv1.AnnotationDeletionDeadline])
	if err != nil {
		deadline = s.now.Add(deletionDelay(s.rs))
		if err := r.setDeletionDeadline(ctx, s.rs, c, deadline.UTC().Format(time.RFC3339)); err != nil {
			return 0, err
		}
	}
	if wait := deadline.Sub(s.now); wait > 0 {
		return wait, nil
	}
	_, err = r.clusters.Delete(ctx, s.rs, client.ObjectKeyFromObject(c))
	return r.opts.InFlightRequeue, err
}

// setDeletionDeadline writes (or, with "", removes) a cluster's deletion
// deadline when it differs.
func (r *Reconciler) setDeletionDeadline(ctx context.Context, rs *rayv1.RayService, c *rayv1.RayCluster, deadline string) error {
	if c.Annotations[rayv1.AnnotationDeletionDeadline] == deadline {
		return nil
	}
	return r.patchClusterAnnotation(ctx, rs, c, rayv1.AnnotationDeletionDeadline, deadline)
}

// patchClusterAnnotation sets (or, with "", removes) one annotation of a
// cluster with a merge patch, and on c.
func (r *Reconciler) patchClusterAnnotation(ctx context.Context, rs *rayv1.RayService, c *rayv1.RayCluster, key, value string) error {
	before := c.DeepCopy()
	if value == "" {
		delete(c.Annotations, key)
	} else {
		if c.Annotations == nil {
			c.Annotations = map[string]string{}
		}
		c.Annotations[key] = value
	}
	return client.IgnoreNotFound(r.Children().Patch(ctx, rs, c, client.MergeFrom(before), childwrite.Event{}))
}

// deletionDelay is spec.rayClusterDeletionDelaySeconds, 60 s when unset.
func deletionDelay(rs *rayv1.RayService) time.Duration {
	if d := rs.Spec.RayClusterDeletionDelaySeconds; d != nil {
		return time.Duration(*d) * time.Second
	}
	return DefaultClusterDeletionDelay
}
