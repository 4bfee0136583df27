package rayjob

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// finalize handles a RayJob being deleted: a Ray job that may still run is
// asked to stop, and the finalizer is removed whether or not that worked, so
// that a broken or already deleted cluster never blocks the deletion.
func (r *Reconciler) finalize(ctx context.Context, job *rayv1.RayJob) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(job, rayv1.RayJobStopJobFinalizer) {
		return ctrl.Result{}, nil
	}
	if !rayv1.IsJobTerminal(job.Status.JobStatus) {
		r.stopRayJob(ctx, job)
	}
	controllerutil.RemoveFinalizer(job, rayv1.RayJobStopJobFinalizer)
	if err := r.updateJob(ctx, job); err != nil {
		return ctrl.Result{}, fmt.Errorf("removing the finalizer: %w", err)
	}
	return ctrl.Result{}, nil
}

// stopRayJob asks the dashboard to stop the RayJob's Ray job, best effort:
// failures are logged and reported as events only.
func (r *Reconciler) stopRayJob(ctx context.Context, job *rayv1.RayJob) {
	if job.Status.JobID == "" || job.Status.DashboardURL == "" {
		return
	}
	log := ctrl.LoggerFrom(ctx)
	cluster := &rayv1.RayCluster{}
	if err := r.Client.Get(ctx, clusterKey(job), cluster); err != nil {
		log.Info("Could not get the RayCluster of a deleted RayJob", "error", err.Error())
		cluster = nil
	}
	err := r.stopWithDashboard(ctx, job, cluster)
	if err != nil {
		log.Info("Failed to stop the Ray job; removing the finalizer anyway", "jobId", job.Status.JobID, "error", err.Error())
		r.events.Eventf(job, nil, corev1.EventTypeWarning, reasonFailedToStopJob, actionStop, "Failed to stop Ray job %s: %v", job.Status.JobID, err)
		return
	}
	r.events.Eventf(job, nil, corev1.EventTypeNormal, reasonStoppedJob, actionStop, "Stopped Ray job %s", job.Status.JobID)
}

// stopWithDashboard sends the stop request.
func (r *Reconciler) stopWithDashboard(ctx context.Context, job *rayv1.RayJob, cluster *rayv1.RayCluster) error {
	dash, err := r.dashboardClient(ctx, job, cluster)
	if err != nil {
		return err
	}
	return dash.StopJob(ctx, job.Status.JobID)
}
