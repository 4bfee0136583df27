package rayjob_test

import (
	"testing"

	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

func keyOf(ns, name string) client.ObjectKey { return client.ObjectKey{Namespace: ns, Name: name} }

// invariants checks, after a restart, that the RayJob never has more than one
// cluster or submitter Job, and that the Ray job was submitted at most once
// per attempt.
func (w *world) invariants(attempts int) {
	w.T.Helper()
	if n := len(w.clusters()); n > 1 {
		w.T.Errorf("%d RayClusters", n)
	}
	if n := len(w.submitterJobs()); n > 1 {
		w.T.Errorf("%d submitter Jobs", n)
	}
	ids := map[string]int{}
	for _, s := range w.dash.Submissions() {
		ids[s.SubmissionID]++
	}
	if len(ids) > attempts {
		w.T.Errorf("submissions for %d job ids, want at most %d", len(ids), attempts)
	}
	for id, n := range ids {
		if n > 1 {
			w.T.Errorf("Ray job %s submitted %d times", id, n)
		}
	}
}

// TestOperatorRestartK8sJobMode restarts the operator in every state a
// K8sJobMode RayJob passes through.
func TestOperatorRestartK8sJobMode(t *testing.T) {
	w := newWorld(t)
	w.Create(rayJob("restart", rayv1.K8sJobMode, func(j *rayv1.RayJob) { j.Spec.ShutdownAfterJobFinishes = true }))

	cluster := w.RayJobCluster("restart")
	w.op.Restart()
	w.WaitRayJob("restart", rayv1.JobDeploymentStatusInitializing)
	if c := w.RayJobCluster("restart"); c.Name != cluster.Name || c.UID != cluster.UID {
		t.Fatalf("cluster changed across the restart: %s -> %s", cluster.Name, c.Name)
	}
	w.invariants(1)

	w.makeClusterReady(cluster.Name)
	w.WaitRayJob("restart", rayv1.JobDeploymentStatusRunning)
	w.op.Restart()
	w.submitLikeSubmitter("restart")
	w.Eventually("RUNNING", func() (bool, error) { return w.RayJob("restart").Status.JobStatus == rayv1.JobStatusRunning, nil })
	w.invariants(1)
	if n := len(w.submitterJobs()); n != 1 {
		t.Fatalf("%d submitter Jobs", n)
	}

	w.setRayJobStatus("restart", rayv1.JobStatusSucceeded)
	w.FinishJob("restart", true)
	w.WaitRayJob("restart", rayv1.JobDeploymentStatusComplete)
	w.op.Restart()
	w.Eventually("the cluster to be deleted", func() (bool, error) { return len(w.clusters()) == 0, nil })
	job := w.RayJob("restart")
	if job.Status.JobDeploymentStatus != rayv1.JobDeploymentStatusComplete || *job.Status.Succeeded != 1 {
		t.Errorf("after restart: %q succeeded %d", job.Status.JobDeploymentStatus, *job.Status.Succeeded)
	}
	w.invariants(1)
}

// TestOperatorRestartHTTPMode restarts the operator around the submission,
// a retry and a suspension of an HTTPMode RayJob.
func TestOperatorRestartHTTPMode(t *testing.T) {
	w := newWorld(t)
	w.Create(rayJob("restarth", rayv1.HTTPMode, func(j *rayv1.RayJob) {
		j.Spec.BackoffLimit = ptr.To[int32](1)
		j.Spec.ShutdownAfterJobFinishes = true
	}))
	w.makeClusterReady(w.RayJobCluster("restarth").Name)
	w.Eventually("the submission", func() (bool, error) { return len(w.dash.Submissions()) == 1, nil })
	w.op.Restart()
	w.setRayJobStatus("restarth", rayv1.JobStatusRunning)
	w.Eventually("RUNNING", func() (bool, error) { return w.RayJob("restarth").Status.JobStatus == rayv1.JobStatusRunning, nil })
	w.invariants(1)

	// Fail the first attempt; restart while it retries.
	first := w.RayJob("restarth").Status.RayClusterName
	w.setRayJobStatus("restarth", rayv1.JobStatusFailed)
	w.op.Restart()
	w.Eventually("the second attempt's cluster", func() (bool, error) {
		job := w.RayJob("restarth")
		return job.Status.RayClusterName != "" && job.Status.RayClusterName != first, nil
	})
	w.op.Restart()
	w.Eventually("only the new cluster left", func() (bool, error) { return len(w.clusters()) == 1, nil })
	w.invariants(2)

	second := w.RayJobCluster("restarth").Name
	w.makeClusterReady(second)
	w.Eventually("the second submission", func() (bool, error) { return len(w.dash.Submissions()) == 2, nil })
	w.op.Restart()
	w.setRayJobStatus("restarth", rayv1.JobStatusSucceeded)
	job := w.WaitRayJob("restarth", rayv1.JobDeploymentStatusComplete)
	if *job.Status.Failed != 1 || *job.Status.Succeeded != 1 {
		t.Errorf("failed %d succeeded %d", *job.Status.Failed, *job.Status.Succeeded)
	}
	w.op.Restart()
	w.Eventually("the cluster to be deleted", func() (bool, error) { return len(w.clusters()) == 0, nil })
	w.invariants(2)
}

// TestOperatorRestartWhileSuspended restarts a suspended and then a
// waiting (InteractiveMode) RayJob's operator.
func TestOperatorRestartWhileSuspendedAndWaiting(t *testing.T) {
	w := newWorld(t)
	w.Create(rayJob("paused", rayv1.InteractiveMode, func(j *rayv1.RayJob) {
		j.Spec.Suspend = true
		j.Spec.ShutdownAfterJobFinishes = true
	}))
	w.WaitRayJob("paused", rayv1.JobDeploymentStatusSuspended)
	w.op.Restart()
	w.WaitRayJob("paused", rayv1.JobDeploymentStatusSuspended)
	if n := len(w.clusters()); n != 0 {
		t.Fatalf("%d clusters while suspended", n)
	}
	job := w.RayJob("paused")
	w.Update(job, func() { job.Spec.Suspend = false })
	w.makeClusterReady(w.RayJobCluster("paused").Name)
	w.WaitRayJob("paused", rayv1.JobDeploymentStatusWaiting)
	w.op.Restart()
	w.WaitRayJob("paused", rayv1.JobDeploymentStatusWaiting)
	w.invariants(0)
}
