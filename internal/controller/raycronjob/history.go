package raycronjob

import (
	"context"
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/childwrite"
	"github.com/ray-operator/ray-operator/internal/passsteps"
)

// pruneHistory deletes the oldest finished RayJobs beyond
// successfulJobsHistoryLimit and failedJobsHistoryLimit. Unset limits keep
// everything, as KubeRay does. Only RayJobs this RayCronJob owns are
// candidates (see observe).
func (r *Reconciler) pruneHistory(ctx context.Context, s *scope) (passsteps.Result, error) {
	limits := []struct {
		field string
		limit *int32
		jobs  []*rayv1.RayJob
	}{
		{"successfulJobsHistoryLimit", s.cj.Spec.SuccessfulJobsHistoryLimit, s.jobs.succeeded},
		{"failedJobsHistoryLimit", s.cj.Spec.FailedJobsHistoryLimit, s.jobs.failed},
	}
	for _, l := range limits {
		for _, job := range overLimit(l.jobs, l.limit) {
			if err := r.deleteRayJob(ctx, s, job, fmt.Sprintf("%s is %d", l.field, *l.limit)); err != nil {
				return passsteps.Result{}, err
			}
		}
	}
	return passsteps.Result{}, nil
}

// overLimit returns the oldest of jobs (sorted oldest first) beyond limit;
// none without a limit.
func overLimit(jobs []*rayv1.RayJob, limit *int32) []*rayv1.RayJob {
	if limit == nil || len(jobs) <= int(*limit) {
		return nil
	}
	return slices.Clone(jobs[:len(jobs)-int(*limit)])
}

// deleteRayJob deletes an owned RayJob (its RayCluster follows through its
// owner reference) and records why; one already gone counts as deleted.
// The UID precondition keeps a later RayJob of the same name safe.
func (r *Reconciler) deleteRayJob(ctx context.Context, s *scope, job *rayv1.RayJob, why string) error {
	err := r.Children().Delete(ctx, s.cj, job, childwrite.Event{
		Reason: reasonDeletedRayJob, Note: fmt.Sprintf("Deleted RayJob %s: %s", job.Name, why),
		FailedReason: reasonFailedToDeleteRayJob, FailedNote: fmt.Sprintf("Failed to delete RayJob %s (%s)", job.Name, why),
	}, childwrite.Related(), childwrite.NotFoundAsDeleted(),
		childwrite.DeleteOptions(client.PropagationPolicy(metav1.DeletePropagationBackground), client.Preconditions{UID: &job.UID}))
	if err != nil {
		return err
	}
	s.jobs.deleted(job)
	return nil
}
