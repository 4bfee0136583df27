package rayjob

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/passsteps"
	"github.com/ray-operator/ray-operator/internal/statuswrite"
)

// scope is the state of one reconcile pass: the RayJob being changed and
// its status as it was read, which decides whether and what to write.
type scope struct {
	job      *rayv1.RayJob
	original rayv1.RayJobStatus
}

// newScope starts a pass over job.
func newScope(job *rayv1.RayJob) *scope {
	return &scope{job: job, original: *job.Status.DeepCopy()}
}

// transitioned reports whether the pass changed the deployment status.
func (s *scope) transitioned() bool {
	return s.original.JobDeploymentStatus != s.job.Status.JobDeploymentStatus
}

// finishPass ends a pass as the other controllers' do: the status is
// written first, then the pass's error or its requeue is returned.
func (r *Reconciler) finishPass(ctx context.Context, s *scope, res passsteps.Result, err error) (ctrl.Result, error) {
	if writeErr := r.writeStatus(ctx, s); writeErr != nil {
		return ctrl.Result{}, writeErr
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: res.RequeueAfter}, nil
}

// writeStatus counts the attempt and decides about a retry when the pass
// ended one, stamps EndTime, records the generation the pass looked at,
// writes the status if anything in it changed, and reports the transition
// as an event and a metric.
func (r *Reconciler) writeStatus(ctx context.Context, s *scope) error {
	if !rayv1.IsJobDeploymentTerminal(s.original.JobDeploymentStatus) &&
		s.original.JobDeploymentStatus != rayv1.JobDeploymentStatusValidationFailed {
		countAttempt(s)
		retryIfAllowed(s.job)
	}
	if s.transitioned() && rayv1.IsJobDeploymentTerminal(s.job.Status.JobDeploymentStatus) {
		s.job.Status.EndTime = &metav1.Time{Time: r.now()}
	}
	// As KubeRay: every status the controller writes describes the spec of
	// the generation it has just read, so a spec change alone is reported.
	s.job.Status.ObservedGeneration = s.job.Generation
	if equality.Semantic.DeepEqual(s.original, s.job.Status) {
		return nil
	}
	read := s.job.ResourceVersion
	if err := statuswrite.Write(ctx, r.Client, s.job, &s.original, &s.job.Status); err != nil {
		return fmt.Errorf("updating the status of RayJob %s/%s: %w", s.job.Namespace, s.job.Name, err)
	}
	r.ownWrites.Wrote(s.job, read)
	if s.transitioned() {
		r.dashFailures.Forget(dashboardCall(s.job))
		r.reportTransition(s)
	}
	return nil
}

// reportTransition emits the event and the execution-duration metric of a
// deployment status change. The forward moves into Initializing and Running
// get no event of their own (KubeRay emits none for any move): the events of
// what the pass did then (CreatedRayCluster, CreatedRayJobSubmitter,
// SubmittedRayJob) already mark them, and at scale they were 2 of a RayJob's
// 9 event writes.
func (r *Reconciler) reportTransition(s *scope) {
	from, to := s.original.JobDeploymentStatus, s.job.Status.JobDeploymentStatus
	r.observeExecution(s, from, to)
	if to == rayv1.JobDeploymentStatusInitializing || to == rayv1.JobDeploymentStatusRunning {
		return
	}
	eventType := corev1.EventTypeNormal
	if to == rayv1.JobDeploymentStatusFailed || to == rayv1.JobDeploymentStatusValidationFailed {
		eventType = corev1.EventTypeWarning
	}
	note := fmt.Sprintf("JobDeploymentStatus changed from %q to %q", from, to)
	if s.job.Status.Reason != "" && eventType == corev1.EventTypeWarning {
		note += fmt.Sprintf(": %s: %s", s.job.Status.Reason, s.job.Status.Message)
	}
	r.events.Eventf(s.job, nil, eventType, reasonStatusChanged, actionTransition, "%s", note)
}

// observeExecution records kuberay_job_execution_duration_seconds when an
// attempt ends: a move from a non-final state to Complete, Failed or Retrying.
func (r *Reconciler) observeExecution(s *scope, from, to rayv1.JobDeploymentStatus) {
	if r.Metrics == nil || s.job.Status.StartTime == nil || rayv1.IsJobDeploymentTerminal(from) {
		return
	}
	if !rayv1.IsJobDeploymentTerminal(to) && to != rayv1.JobDeploymentStatusRetrying {
		return
	}
	retries := 0
	if s.original.Failed != nil {
		retries = int(*s.original.Failed)
	}
	seconds := r.now().Sub(s.job.Status.StartTime.Time).Seconds()
	r.Metrics.ObserveRayJobExecutionDuration(s.job.Name, s.job.Namespace, to, retries, seconds)
}

// updateJob writes job (its metadata and spec) and records the version it
// replaced, which a later pass may still read from the cache.
func (r *Reconciler) updateJob(ctx context.Context, job *rayv1.RayJob) error {
	read := job.ResourceVersion
	if err := r.Client.Update(ctx, job); err != nil {
		return err
	}
	r.ownWrites.Wrote(job, read)
	return nil
}
