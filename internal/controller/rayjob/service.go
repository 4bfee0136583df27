package rayjob

import (
	"context"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/clusterowner"
	"github.com/ray-operator/ray-operator/internal/rayservices"
)

// reconcileHeadService keeps "<rayjob>-head-svc", a Service with a name that
// does not change across retries, pointing at the head of the RayJob's
// current cluster (a retry's new cluster takes it over, keeping its
// ClusterIP). A selected cluster (clusterSelector) gets none.
func (r *Reconciler) reconcileHeadService(ctx context.Context, job *rayv1.RayJob, cluster *rayv1.RayCluster) error {
	if job.Spec.UsesClusterSelector() {
		return nil
	}
	opts := rayservices.HeadServiceOptions{ClusterIP: r.opts.HeadServiceClusterIP}
	_, err := r.clusters.ApplyService(ctx, job, clusterowner.OwnerHeadService(job, rayv1.KindRayJob, cluster, opts))
	return err
}
