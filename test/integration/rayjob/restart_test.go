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
	w.t.Helper()
	if n := len(w.clusters()); n > 1 {
		w.t.Errorf("%d RayClusters", n)
	}
	if n := len(w.submitterJobs()); n > 1 {
		w.t.Errorf("%d submitter Jobs", n)
	}
	ids := map[string]int{}
	for _, s := range w.dash.Submissions() {
		ids[s.SubmissionID]++
	}
	if len(ids) > attempts {
		w.t.Errorf("submissions for %d job ids, want at most %d", len(ids), attempts)
	}
	for id, n := range ids {
		if n > 1 {
			w.t.Errorf("Ray job %s submitted %d times", id, n)
		}
	}
}

// TestOperatorRestartK8sJobMode restarts the operator in every state a
// K8sJobMode RayJob passes through.
func TestOperatorRestartK8sJobMode(t *testing.T) {
	w := newWorld(t)
	w.create(rayJob("restart", rayv1.K8sJobMode, func(j *rayv1.RayJob) { j.Spec.ShutdownAfterJobFinishes = true }))

	cluster := w.clusterOf("restart")
	w.restart()
	w.waitFor("restart", rayv1.JobDeploymentStatusInitializing)
	if c := w.clusterOf("restart"); c.Name != cluster.Name || c.UID != cluster.UID {
		t.Fatalf("cluster changed across the restart: %s -> %s", cluster.Name, c.Name)
	}
	w.invariants(1)

	w.makeClusterReady(cluster.Name)
	w.waitFor("restart", rayv1.JobDeploymentStatusRunning)
	w.restart()
	w.submitLikeSubmitter("restart")
	w.eventually("RUNNING", func() (bool, error) { return w.job("restart").Status.JobStatus == rayv1.JobStatusRunning, nil })
	w.invariants(1)
	if n := len(w.submitterJobs()); n != 1 {
		t.Fatalf("%d submitter Jobs", n)
	}

	w.setRayJobStatus("restart", rayv1.JobStatusSucceeded)
	w.finishSubmitter("restart", true)
	w.waitFor("restart", rayv1.JobDeploymentStatusComplete)
	w.restart()
	w.eventually("the cluster to be deleted", func() (bool, error) { return len(w.clusters()) == 0, nil })
	job := w.job("restart")
	if job.Status.JobDeploymentStatus != rayv1.JobDeploymentStatusComplete || *job.Status.Succeeded != 1 {
		t.Errorf("after restart: %q succeeded %d", job.Status.JobDeploymentStatus, *job.Status.Succeeded)
	}
	w.invariants(1)
}

// TestOperatorRestartHTTPMode restarts the operator around the submission,
// a retry and a suspension of an HTTPMode RayJob.
func TestOperatorRestartHTTPMode(t *testing.T) {
	w := newWorld(t)
	w.create(rayJob("restarth", rayv1.HTTPMode, func(j *rayv1.RayJob) {
		j.Spec.BackoffLimit = ptr.To[int32](1)
		j.Spec.ShutdownAfterJobFinishes = true
	}))
	w.makeClusterReady(w.clusterOf("restarth").Name)
	w.eventually("the submission", func() (bool, error) { return len(w.dash.Submissions()) == 1, nil })
	w.restart()
	w.setRayJobStatus("restarth", rayv1.JobStatusRunning)
	w.eventually("RUNNING", func() (bool, error) { return w.job("restarth").Status.JobStatus == rayv1.JobStatusRunning, nil })
	w.invariants(1)

	// Fail the first attempt; restart while it retries.
	first := w.job("restarth").Status.RayClusterName
	w.setRayJobStatus("restarth", rayv1.JobStatusFailed)
	w.restart()
	w.eventually("the second attempt's cluster", func() (bool, error) {
		job := w.job("restarth")
		return job.Status.RayClusterName != "" && job.Status.RayClusterName != first, nil
	})
	w.restart()
	w.eventually("only the new cluster left", func() (bool, error) { return len(w.clusters()) == 1, nil })
	w.invariants(2)

	second := w.clusterOf("restarth").Name
	w.makeClusterReady(second)
	w.eventually("the second submission", func() (bool, error) { return len(w.dash.Submissions()) == 2, nil })
	w.restart()
	w.setRayJobStatus("restarth", rayv1.JobStatusSucceeded)
	job := w.waitFor("restarth", rayv1.JobDeploymentStatusComplete)
	if *job.Status.Failed != 1 || *job.Status.Succeeded != 1 {
		t.Errorf("failed %d succeeded %d", *job.Status.Failed, *job.Status.Succeeded)
	}
	w.restart()
	w.eventually("the cluster to be deleted", func() (bool, error) { return len(w.clusters()) == 0, nil })
	w.invariants(2)
}

// TestOperatorRestartWhileSuspended restarts a suspended and then a
// waiting (InteractiveMode) RayJob's operator.
func TestOperatorRestartWhileSuspendedAndWaiting(t *testing.T) {
	w := newWorld(t)
	w.create(rayJob("paused", rayv1.InteractiveMode, func(j *rayv1.RayJob) {
		j.Spec.Suspend = true
		j.Spec.ShutdownAfterJobFinishes = true
	}))
	w.waitFor("paused", rayv1.JobDeploymentStatusSuspended)
	w.restart()
	w.waitFor("paused", rayv1.JobDeploymentStatusSuspended)
	if n := len(w.clusters()); n != 0 {
		t.Fatalf("%d clusters while suspended", n)
	}
	job := w.job("paused")
	w.update(job, false, func() { job.Spec.Suspend = false })
	w.makeClusterReady(w.clusterOf("paused").Name)
	w.waitFor("paused", rayv1.JobDeploymentStatusWaiting)
	w.restart()
	w.waitFor("paused", rayv1.JobDeploymentStatusWaiting)
	w.invariants(0)
}
