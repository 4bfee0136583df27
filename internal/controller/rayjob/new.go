package rayjob

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/passsteps"
)

// reconcileNew adds the finalizer that stops the Ray job on deletion, then
// fixes the job id and cluster name before anything is created, so that a
// restarted operator finds the same names instead of creating duplicates.
func (r *Reconciler) reconcileNew(ctx context.Context, s *scope) (passsteps.Result, error) {
	if !controllerutil.ContainsFinalizer(s.job, rayv1.RayJobStopJobFinalizer) {
		controllerutil.AddFinalizer(s.job, rayv1.RayJobStopJobFinalizer)
		if err := r.updateJob(ctx, s.job); err != nil {
			return passsteps.Result{}, fmt.Errorf("adding the finalizer: %w", err)
		}
	}
	initStatus(s.job, metav1.NewTime(r.now()))
	return requeue()
}

// initStatus moves a New RayJob to Initializing: the job id comes from
// spec.jobId or is generated (except in InteractiveMode, where the user
// provides it later), the cluster name from the clusterSelector or is
// generated, and StartTime starts the deadlines. A retry or a resume comes
// back through New with the ids cleared, so each attempt gets a new
// StartTime and its own deadlines, as in KubeRay.
func initStatus(job *rayv1.RayJob, now metav1.Time) {
	status := &job.Status
	if status.JobID != "" && status.RayClusterName != "" && status.JobStatus != "" {
		return
	}
	if job.Spec.SubmissionMode != rayv1.InteractiveMode && status.JobID == "" {
		status.JobID = job.Spec.JobID
		if status.JobID == "" {
			status.JobID = generateName(job.Name)
		}
	}
	if status.RayClusterName == "" {
		status.RayClusterName = job.Spec.ClusterSelector[rayv1.ClusterSelectorKey]
		if status.RayClusterName == "" {
			status.RayClusterName = generateName(job.Name)
		}
	}
	if status.JobStatus == "" {
		status.JobStatus = rayv1.JobStatusNew
	}
	status.JobDeploymentStatus = rayv1.JobDeploymentStatusInitializing
	status.StartTime = &now
	nextExecutionAttempt(job)
}

// generateName appends five random characters to a RayJob name, as KubeRay
// names a RayJob's clusters and submission ids.
func generateName(base string) string {
	return base + "-" + utilrand.String(5)
}
