package rayjob

import (
	"context"
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/batchscheduler"
	"github.com/ray-operator/ray-operator/internal/childwrite"
	"github.com/ray-operator/ray-operator/internal/clusterindex"
	"github.com/ray-operator/ray-operator/internal/submitter"
)

// submitterState is what the submitter (batch Job or sidecar container) of a
// Running RayJob shows.
type submitterState struct {
	// headGone is set when the SidecarMode head Pod, and with it the
	// submitter, is gone; the RayJob was failed.
	headGone bool
	// failure, when not empty, says how the submitter failed: the message of
	// SubmissionFailed. endFailedSubmission decides what the RayJob becomes.
	failure string
	// finishedAt is when the submitter ended, nil while it runs.
	finishedAt *time.Time
}

// submitterJobKey names the submitter Job: the RayJob's own name.
func submitterJobKey(job *rayv1.RayJob) types.NamespacedName {
	return types.NamespacedName{Namespace: job.Namespace, Name: job.Name}
}

// createSubmitterJobIfNeeded creates the K8sJobMode submitter Job unless it
// exists; the fixed name keeps a restarted operator from submitting twice.
func (r *Reconciler) createSubmitterJobIfNeeded(ctx context.Context, job *rayv1.RayJob, cluster *rayv1.RayCluster) error {
	existing := &batchv1.Job{}
	err := r.Client.Get(ctx, submitterJobKey(job), existing)
	if err == nil || !apierrors.IsNotFound(err) {
		return err
	}
	batchJob, err := submitter.Job(job, cluster)
	if err != nil {
		return err
	}
	batchscheduler.AddMetadata(ctx, r.opts.BatchScheduler, job, &batchJob.Spec.Template, batchscheduler.SubmitterGroup)
	batchJob.Labels = attemptLabels(job, batchJob.Labels)
	batchJob.Spec.Template.Labels = attemptLabels(job, batchJob.Spec.Template.Labels)
	if err := controllerutil.SetControllerReference(job, batchJob, r.Client.Scheme()); err != nil {
		return err
	}
	return r.Children().Create(ctx, job, batchJob, childwrite.Event{
		Reason: reasonCreatedSubmitter, Note: fmt.Sprintf("Created Kubernetes Job %s", submitterJobKey(job)),
		FailedReason: reasonFailedToCreateSubmitter, FailedNote: fmt.Sprintf("Failed to create new Kubernetes Job %s", submitterJobKey(job)),
	})
}

// deleteSubmitterJob deletes the K8sJobMode submitter Job and its Pods. It
// reports true once the Job is gone; other modes have nothing to delete.
func (r *Reconciler) deleteSubmitterJob(ctx context.Context, job *rayv1.RayJob) (bool, error) {
	if job.Spec.EffectiveSubmissionMode() != rayv1.K8sJobMode {
		return true, nil
	}
	batchJob := &batchv1.Job{}
	if err := r.Client.Get(ctx, submitterJobKey(job), batchJob); err != nil {
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	}
	if !batchJob.DeletionTimestamp.IsZero() {
		return false, nil
	}
	noun := "submitter K8s Job " + submitterJobKey(job).String()
	return false, r.Children().Delete(ctx, job, batchJob, childwrite.Noted(childwrite.Delete, noun, reasonDeletedSubmitter, reasonFailedToDeleteSubmitter),
		childwrite.DeleteOptions(client.PropagationPolicy(metav1.DeletePropagationBackground)))
}

// observeSubmitter reads the submitter of a Running RayJob. A failed
// submitter is reported (failure), not acted on: whether the RayJob failed
// to submit or its Ray job ran to an end is endFailedSubmission's decision.
func (r *Reconciler) observeSubmitter(ctx context.Context, job *rayv1.RayJob, cluster *rayv1.RayCluster) (submitterState, error) {
	if job.Spec.EffectiveSubmissionMode() == rayv1.SidecarMode {
		return r.observeSidecar(ctx, job, cluster)
	}
	batchJob := &batchv1.Job{}
	if err := r.Client.Get(ctx, submitterJobKey(job), batchJob); err != nil {
		return submitterState{}, fmt.Errorf("getting submitter Job %s: %w", submitterJobKey(job), err)
	}
	state := submitterState{}
	if cond := jobCondition(batchJob, batchv1.JobFailed); cond != nil {
		state.failure = fmt.Sprintf("Job submission has failed. Reason: %s. Message: %s", cond.Reason, cond.Message)
	}
	for _, t := range []batchv1.JobConditionType{batchv1.JobComplete, batchv1.JobFailed} {
		if cond := jobCondition(batchJob, t); cond != nil && !cond.LastTransitionTime.IsZero() {
			state.finishedAt = &cond.LastTransitionTime.Time
		}
	}
	return state, nil
}

// observeSidecar reads the submitter container of the head Pod. A missing
// head Pod fails the RayJob: the head is never recreated in SidecarMode.
func (r *Reconciler) observeSidecar(ctx context.Context, job *rayv1.RayJob, cluster *rayv1.RayCluster) (submitterState, error) {
	head, err := r.headPod(ctx, cluster)
	if err != nil {
		return submitterState{}, err
	}
	if head == nil {
		job.Status.JobDeploymentStatus = rayv1.JobDeploymentStatusFailed
		job.Status.Reason = rayv1.AppFailed
		job.Status.Message = "Ray head pod not found."
		return submitterState{headGone: true}, nil
	}
	status := sidecarStatus(head)
	if status == nil {
		return submitterState{}, nil
	}
	state := submitterState{}
	if t := status.State.Terminated; t != nil {
		state.finishedAt = &t.FinishedAt.Time
	}
	if r.sidecarRestartEnabled() {
		state.failure = restartsExhausted(job, status)
	} else {
		state.failure = sidecarFailure(status)
	}
	return state, nil
}

// sidecarFailure says how the submitter container, which never restarts,
// failed: it exited non-zero. Empty when it did not fail.
func sidecarFailure(status *corev1.ContainerStatus) string {
	t := status.State.Terminated
	if t == nil || t.ExitCode == 0 {
		return ""
	}
	return fmt.Sprintf("Ray head pod container %s terminated with exit code %d: %s",
		submitter.ContainerName, t.ExitCode, t.Reason)
}

// restartsExhausted says how a restartable submitter container
// (SidecarSubmitterRestart) failed once it has failed and restarted
// submitter.DefaultBackoffLimit times, as KubeRay counts it: a non-zero exit
// alone is transient, the kubelet restarts the container. SidecarMode
// refuses spec.submitterConfig, so the limit is always the default. Empty
// when it did not fail (yet).
func restartsExhausted(job *rayv1.RayJob, status *corev1.ContainerStatus) string {
	if status.LastTerminationState.Terminated == nil {
		return ""
	}
	if t := status.State.Terminated; t != nil && t.ExitCode == 0 {
		return ""
	}
	limit := submitter.DefaultBackoffLimit
	if job.Spec.SubmitterConfig != nil && job.Spec.SubmitterConfig.BackoffLimit != nil {
		limit = *job.Spec.SubmitterConfig.BackoffLimit
	}
	if status.RestartCount < limit {
		return ""
	}
	return fmt.Sprintf("Ray head pod submitter container %s terminated after exceeding the maximum restart count",
		submitter.ContainerName)
}

// failSubmission fails a RayJob whose submitter failed (message: how), as
// KubeRay does: SubmissionFailed, unless the Ray job itself was already
// seen failing, then the application is to blame (AppFailed, Ray's message
// kept).
func failSubmission(job *rayv1.RayJob, message string) {
	job.Status.JobDeploymentStatus = rayv1.JobDeploymentStatusFailed
	if job.Status.JobStatus == rayv1.JobStatusFailed {
		job.Status.Reason = rayv1.AppFailed
		return
	}
	job.Status.Reason = rayv1.SubmissionFailed
	job.Status.Message = message
}

// headPod returns the cluster's head Pod, terminating or not (the one of
// a SidecarMode cluster is never replaced), nil if there is none.
func (r *Reconciler) headPod(ctx context.Context, cluster *rayv1.RayCluster) (*corev1.Pod, error) {
	pods, err := clusterindex.HeadPods(ctx, r.Client, cluster)
	if err != nil || len(pods) == 0 {
		return nil, err
	}
	return &pods[0], nil
}

// sidecarStatus is the status of the submitter container, nil before the
// kubelet reported one.
func sidecarStatus(pod *corev1.Pod) *corev1.ContainerStatus {
	for i := range pod.Status.ContainerStatuses {
		if pod.Status.ContainerStatuses[i].Name == submitter.ContainerName {
			return &pod.Status.ContainerStatuses[i]
		}
	}
	return nil
}

// jobCondition returns the true condition of type t of a batch Job.
func jobCondition(job *batchv1.Job, t batchv1.JobConditionType) *batchv1.JobCondition {
	for i := range job.Status.Conditions {
		if c := &job.Status.Conditions[i]; c.Type == t && c.Status == corev1.ConditionTrue {
			return c
		}
	}
	return nil
}
