package rayjob

import (
	"context"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// Execution attempts (spec.retryStrategy BlockingRecreate, not KubeRay's):
// every attempt is numbered, the number is on the attempt's children, and
// the next attempt waits until every Pod of the previous one is gone.

// reasonWaitingForPreviousAttempt reports that a new attempt waits for the
// previous attempt's Pods.
const reasonWaitingForPreviousAttempt = "WaitingForPreviousAttemptPods"

// nextExecutionAttempt numbers an attempt that starts: one more than the
// last, from 1. Without BlockingRecreate the status keeps no number.
func nextExecutionAttempt(job *rayv1.RayJob) {
	if !job.Spec.BlockingRecreate() {
		return
	}
	job.Status.ExecutionAttempt = ptr.To(ptr.Deref(job.Status.ExecutionAttempt, 0) + 1)
}

// attemptLabels adds the attempt's number to labels (nil-safe) when the
// RayJob numbers its attempts.
func attemptLabels(job *rayv1.RayJob, labels map[string]string) map[string]string {
	if job.Status.ExecutionAttempt == nil {
		return labels
	}
	if labels == nil {
		labels = map[string]string{}
	}
	labels[rayv1.LabelExecutionAttempt] = strconv.Itoa(int(*job.Status.ExecutionAttempt))
	return labels
}

// labelClusterAttempt puts the attempt's number on the RayCluster and on
// its head and worker Pod templates.
func labelClusterAttempt(job *rayv1.RayJob, cluster *rayv1.RayCluster) {
	if job.Status.ExecutionAttempt == nil {
		return
	}
	cluster.Labels = attemptLabels(job, cluster.Labels)
	head := &cluster.Spec.HeadGroupSpec.Template
	head.Labels = attemptLabels(job, head.Labels)
	for i := range cluster.Spec.WorkerGroupSpecs {
		t := &cluster.Spec.WorkerGroupSpecs[i].Template
		t.Labels = attemptLabels(job, t.Labels)
	}
}

// previousAttemptPods counts the Pods of the attempt being released that
// are still on the API server: the cluster's (its head, with a SidecarMode
// submitter, and workers) and the K8sJobMode submitter's.
func (r *Reconciler) previousAttemptPods(ctx context.Context, job *rayv1.RayJob) (int, error) {
	var selectors []client.MatchingLabels
	if job.Status.RayClusterName != "" && !job.Spec.UsesClusterSelector() {
		selectors = append(selectors, client.MatchingLabels{rayv1.LabelCluster: job.Status.RayClusterName})
	}
	if job.Spec.EffectiveSubmissionMode() == rayv1.K8sJobMode {
		selectors = append(selectors, client.MatchingLabels{"batch.kubernetes.io/job-name": job.Name})
	}
	n := 0
	for _, sel := range selectors {
		pods := &corev1.PodList{}
		if err := r.LiveReader.List(ctx, pods, client.InNamespace(job.Namespace), sel); err != nil {
			return 0, err
		}
		n += len(pods.Items)
	}
	return n, nil
}
