package rayjob

import (
	"k8s.io/utils/ptr"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// countAttempt keeps status.failed and status.succeeded: both are always
// set, and the pass that ends an attempt adds it to its counter. They
// survive retries, so they count attempts over the RayJob's whole life.
func countAttempt(s *scope) {
	status := &s.job.Status
	failed, succeeded := ptr.Deref(status.Failed, 0), ptr.Deref(status.Succeeded, 0)
	if s.transitioned() {
		switch {
		case status.JobDeploymentStatus == rayv1.JobDeploymentStatusFailed:
			failed++
		case status.JobDeploymentStatus == rayv1.JobDeploymentStatusComplete && status.JobStatus == rayv1.JobStatusSucceeded:
			succeeded++
		}
	}
	status.Failed, status.Succeeded = ptr.To(failed), ptr.To(succeeded)
}

// retryIfAllowed turns a fresh Failed into Retrying while spec.backoffLimit
// allows another attempt: backoffLimit n means at most n+1 attempts. A
// missed activeDeadlineSeconds or preRunningDeadlineSeconds, and a
// dashboard unreachable past the status check timeout, are never retried.
// The deadlines are counted from status.startTime, which every attempt sets
// anew on its way from New to Initializing (initStatus), as
// KubeRay's initRayJobStatusIfNeed does: they bound one attempt, and a
// RayJob with retries may run up to (backoffLimit+1) times the deadline.
func retryIfAllowed(job *rayv1.RayJob) {
	if job.Status.JobDeploymentStatus != rayv1.JobDeploymentStatusFailed || job.Spec.BackoffLimit == nil {
		return
	}
	switch job.Status.Reason {
	case rayv1.DeadlineExceeded, rayv1.PreRunningDeadlineExceeded, rayv1.JobStatusCheckTimeoutExceeded:
		return
	}
	if ptr.Deref(job.Status.Failed, 0) < *job.Spec.BackoffLimit+1 {
		job.Status.JobDeploymentStatus = rayv1.JobDeploymentStatusRetrying
	}
}
