package rayjob_test

import (
	"context"
	"strings"
	"testing"

	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// blockingRecreate: two attempts (backoffLimit 1), BlockingRecreate.
func blockingRecreate(j *rayv1.RayJob) {
	j.Spec.BackoffLimit = ptr.To[int32](1)
	j.Spec.RetryStrategy = ptr.To(rayv1.RetryBlockingRecreate)
}

// requireAttemptLabels: the cluster and its Pod templates carry the
// attempt's number.
func requireAttemptLabels(t *testing.T, cluster *rayv1.RayCluster, want string) {
	t.Helper()
	labels := map[string]map[string]string{"cluster": cluster.Labels, "head template": cluster.Spec.HeadGroupSpec.Template.Labels}
	for _, g := range cluster.Spec.WorkerGroupSpecs {
		labels["worker template "+g.GroupName] = g.Template.Labels
	}
	for what, l := range labels {
		if got := l[rayv1.LabelExecutionAttempt]; got != want {
			t.Errorf("%s: %s = %q, want %q", what, rayv1.LabelExecutionAttempt, got, want)
		}
	}
}

// TestBlockingRecreateWaitsForPods: with retryStrategy BlockingRecreate the
// first attempt is number 1 in the status and on the cluster and its Pod
// templates; after the attempt fails, its RayCluster is deleted but a Pod
// of it still terminating (held by a finalizer) keeps the next attempt
// from starting (event WaitingForPreviousAttemptPods, no new cluster);
// once the Pod is gone, attempt 2 starts on a new cluster labelled 2.
func TestBlockingRecreateWaitsForPods(t *testing.T) {
	w := newWorld(t)
	w.Create(rayJob("blocking", rayv1.HTTPMode, blockingRecreate))
	first := w.RayJobCluster("blocking")
	if job := w.RayJob("blocking"); ptr.Deref(job.Status.ExecutionAttempt, 0) != 1 {
		t.Errorf("executionAttempt = %v, want 1", job.Status.ExecutionAttempt)
	}
	requireAttemptLabels(t, first, "1")
	pod := w.createHeadPod(first)
	w.Update(pod, func() { pod.Finalizers = []string{"test/terminating"} })
	w.makeClusterReady(first.Name)
	w.WaitRayJob("blocking", rayv1.JobDeploymentStatusRunning)
	w.setRayJobStatus("blocking", rayv1.JobStatusFailed)

	e := w.WaitEvent("blocking", "WaitingForPreviousAttemptPods")
	if !strings.Contains(e.Note, "Waiting for 1 Pods of execution attempt 1 to be gone") {
		t.Errorf("event note = %q", e.Note)
	}
	if job := w.RayJob("blocking"); job.Status.JobDeploymentStatus != rayv1.JobDeploymentStatusRetrying {
		t.Errorf("while the Pod terminates: %s, want Retrying", job.Status.JobDeploymentStatus)
	}
	if n := len(w.clusters()); n != 0 {
		t.Errorf("%d RayClusters while a Pod of the first attempt is still there", n)
	}

	w.Update(pod, func() { pod.Finalizers = nil })
	if err := w.Client.Delete(context.Background(), pod); client.IgnoreNotFound(err) != nil {
		t.Fatal(err)
	}
	w.Eventually("attempt 2 on a new cluster", func() (bool, error) {
		job := w.RayJob("blocking")
		return job.Status.RayClusterName != "" && job.Status.RayClusterName != first.Name && ptr.Deref(job.Status.ExecutionAttempt, 0) == 2, nil
	})
	requireAttemptLabels(t, w.RayJobCluster("blocking"), "2")
}

// TestBlockingRecreateSubmitterLabels: in K8sJobMode the submitter Job
// and its Pod template carry the attempt's number.
func TestBlockingRecreateSubmitterLabels(t *testing.T) {
	w := newWorld(t)
	w.Create(rayJob("blocking-k8s", rayv1.K8sJobMode, blockingRecreate))
	w.makeClusterReady(w.RayJobCluster("blocking-k8s").Name)
	w.Eventually("the submitter Job", func() (bool, error) { return len(w.submitterJobs()) == 1, nil })
	job := w.submitterJobs()[0]
	if job.Labels[rayv1.LabelExecutionAttempt] != "1" || job.Spec.Template.Labels[rayv1.LabelExecutionAttempt] != "1" {
		t.Errorf("submitter Job labels %v, Pod template labels %v", job.Labels, job.Spec.Template.Labels)
	}
}

// TestRecreateKeepsKubeRayObjects: without retryStrategy there is no
// attempt number in the status or on the children (KubeRay's objects).
func TestRecreateKeepsKubeRayObjects(t *testing.T) {
	w := newWorld(t)
	w.Create(rayJob("recreate", rayv1.HTTPMode, func(j *rayv1.RayJob) { j.Spec.BackoffLimit = ptr.To[int32](1) }))
	cluster := w.RayJobCluster("recreate")
	if job := w.RayJob("recreate"); job.Status.ExecutionAttempt != nil {
		t.Errorf("executionAttempt = %d without retryStrategy", *job.Status.ExecutionAttempt)
	}
	if _, ok := cluster.Labels[rayv1.LabelExecutionAttempt]; ok {
		t.Errorf("cluster labelled %v", cluster.Labels)
	}
}
