package rayjob

import (
	"fmt"
	"time"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// failIfActiveDeadlinePassed fails the RayJob with DeadlineExceeded once
// spec.activeDeadlineSeconds have passed since status.startTime, the start
// of the current attempt. The deadline covers cluster creation as well as
// the job itself.
func (r *Reconciler) failIfActiveDeadlinePassed(job *rayv1.RayJob) bool {
	limit := job.Spec.ActiveDeadlineSeconds
	if limit == nil || !r.passed(job, *limit) {
		return false
	}
	job.Status.JobDeploymentStatus = rayv1.JobDeploymentStatusFailed
	job.Status.Reason = rayv1.DeadlineExceeded
	job.Status.Message = fmt.Sprintf("The RayJob has passed the activeDeadlineSeconds. StartTime: %v. ActiveDeadlineSeconds: %d",
		job.Status.StartTime, *limit)
	return true
}

// failIfPreRunningDeadlinePassed fails a RayJob that has not reached Running
// spec.preRunningDeadlineSeconds after status.startTime, with
// PreRunningDeadlineExceeded.
func (r *Reconciler) failIfPreRunningDeadlinePassed(job *rayv1.RayJob) bool {
	limit := job.Spec.PreRunningDeadlineSeconds
	if limit == nil || *limit <= 0 || !r.passed(job, *limit) {
		return false
	}
	job.Status.JobDeploymentStatus = rayv1.JobDeploymentStatusFailed
	job.Status.Reason = rayv1.PreRunningDeadlineExceeded
	job.Status.Message = fmt.Sprintf("The RayJob did not reach Running within the preRunningDeadlineSeconds. StartTime: %v. PreRunningDeadlineSeconds: %d",
		job.Status.StartTime, *limit)
	return true
}

// passed reports whether seconds have elapsed since the RayJob's StartTime.
func (r *Reconciler) passed(job *rayv1.RayJob, seconds int32) bool {
	if job.Status.StartTime == nil {
		return false
	}
	deadline := job.Status.StartTime.Add(time.Duration(seconds) * time.Second)
	return !r.now().Before(deadline)
}
