package raycronjob

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/passsteps"
)

// ownedJobs are the RayJobs a RayCronJob created (labelled with its name
// and controlled by it), by state, each list oldest schedule time first.
type ownedJobs struct {
	// names holds every owned RayJob, those being deleted included.
	names map[string]bool
	// active have not finished and are not being deleted.
	active []*rayv1.RayJob
	// succeeded are Complete; failed are Failed or ValidationFailed (which
	// never runs again either).
	succeeded, failed []*rayv1.RayJob
}

// observe lists the RayJobs the RayCronJob owns, from the API server rather
// than the cache: whether a run is due, already created or blocked by a
// running one must not be decided on a view that misses a RayJob created a
// moment ago. One list per pass is cheap next to the schedule.
func (r *Reconciler) observe(ctx context.Context, s *scope) (passsteps.Result, error) {
	list := &rayv1.RayJobList{}
	if err := r.LiveReader.List(ctx, list, client.InNamespace(s.cj.Namespace),
		client.MatchingLabels{rayv1.LabelCronJobName: s.cj.Name}); err != nil {
		return passsteps.Result{}, fmt.Errorf("listing RayJobs: %w", err)
	}
	s.jobs = classify(s.cj, list.Items)
	recordLastSuccess(&s.cj.Status, s.jobs.succeeded)
	return passsteps.Result{}, nil
}

// classify sorts the RayJobs that cj controls by state and age.
func classify(cj *rayv1.RayCronJob, items []rayv1.RayJob) *ownedJobs {
	jobs := &ownedJobs{names: map[string]bool{}}
	for i := range items {
		job := &items[i]
		if !metav1.IsControlledBy(job, cj) {
			continue
		}
		jobs.names[job.Name] = true
		switch {
		case !job.DeletionTimestamp.IsZero():
		case job.Status.JobDeploymentStatus == rayv1.JobDeploymentStatusComplete:
			jobs.succeeded = append(jobs.succeeded, job)
		case job.Status.JobDeploymentStatus == rayv1.JobDeploymentStatusFailed,
			job.Status.JobDeploymentStatus == rayv1.JobDeploymentStatusValidationFailed:
			jobs.failed = append(jobs.failed, job)
		default:
			jobs.active = append(jobs.active, job)
		}
	}
	for _, list := range [][]*rayv1.RayJob{jobs.active, jobs.succeeded, jobs.failed} {
		slices.SortFunc(list, oldestFirst)
	}
	return jobs
}

// oldestFirst orders RayJobs by schedule time, then name.
func oldestFirst(a, b *rayv1.RayJob) int {
	return cmp.Or(scheduledTime(a).Compare(scheduledTime(b)), cmp.Compare(a.Name, b.Name))
}

// created records a RayJob this pass created: it runs.
func (o *ownedJobs) created(job *rayv1.RayJob) {
	o.names[job.Name] = true
	o.active = append(o.active, job)
}

// deleted forgets a RayJob this pass deleted from the lists of running and
// finished RayJobs; its name stays taken until it is gone.
func (o *ownedJobs) deleted(job *rayv1.RayJob) {
	isJob := func(j *rayv1.RayJob) bool { return j.Name == job.Name }
	o.active = slices.DeleteFunc(o.active, isJob)
	o.succeeded = slices.DeleteFunc(o.succeeded, isJob)
	o.failed = slices.DeleteFunc(o.failed, isJob)
}

// recordLastSuccess moves status.lastSuccessfulTime forward to the latest
// end of a successful RayJob. It runs before the history is pruned and
// never goes back, so the time survives the RayJob it came from.
func recordLastSuccess(status *rayv1.RayCronJobStatus, succeeded []*rayv1.RayJob) {
	for _, job := range succeeded {
		if end := job.Status.EndTime; end != nil && (status.LastSuccessfulTime == nil || end.After(status.LastSuccessfulTime.Time)) {
			status.LastSuccessfulTime = end.DeepCopy()
		}
	}
}

// activeRefs references the running RayJobs, oldest first.
func activeRefs(active []*rayv1.RayJob) []corev1.ObjectReference {
	var refs []corev1.ObjectReference
	for _, job := range active {
		refs = append(refs, corev1.ObjectReference{
			APIVersion: rayv1.GroupVersion.String(), Kind: rayv1.KindRayJob,
			Namespace: job.Namespace, Name: job.Name, UID: job.UID,
		})
	}
	return refs
}
