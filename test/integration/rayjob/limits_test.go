package rayjob_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// TestRetriesWithBackoffLimit: backoffLimit 1 allows two attempts, each on
// its own cluster; the counters survive the retry.
func TestRetriesWithBackoffLimit(t *testing.T) {
	w := newWorld(t)
	w.Create(rayJob("retry", rayv1.HTTPMode, func(j *rayv1.RayJob) { j.Spec.BackoffLimit = ptr.To[int32](1) }))

	first := w.RayJobCluster("retry")
	w.makeClusterReady(first.Name)
	w.WaitRayJob("retry", rayv1.JobDeploymentStatusRunning)
	firstID := w.RayJob("retry").Status.JobID
	w.setRayJobStatus("retry", rayv1.JobStatusFailed)

	w.Eventually("a second attempt on a new cluster", func() (bool, error) {
		job := w.RayJob("retry")
		return job.Status.RayClusterName != "" && job.Status.RayClusterName != first.Name, nil
	})
	if job := w.RayJob("retry"); *job.Status.Failed != 1 || job.Status.JobID == firstID {
		t.Errorf("failed %d, job id %q (first %q)", *job.Status.Failed, job.Status.JobID, firstID)
	}
	w.Eventually("the first cluster to be deleted", func() (bool, error) {
		err := w.Client.Get(context.Background(), client.ObjectKeyFromObject(first), first)
		return client.IgnoreNotFound(err) == nil && err != nil, client.IgnoreNotFound(err)
	})

	w.makeClusterReady(w.RayJobCluster("retry").Name)
	w.WaitRayJob("retry", rayv1.JobDeploymentStatusRunning)
	w.setRayJobStatus("retry", rayv1.JobStatusFailed)
	job := w.WaitRayJob("retry", rayv1.JobDeploymentStatusFailed)
	if *job.Status.Failed != 2 || *job.Status.Succeeded != 0 || job.Status.Reason != rayv1.AppFailed {
		t.Errorf("failed %d succeeded %d reason %q", *job.Status.Failed, *job.Status.Succeeded, job.Status.Reason)
	}
	if n := len(w.dash.Submissions()); n != 2 {
		t.Errorf("%d submissions, want one per attempt", n)
	}
}

// TestActiveDeadline: the deadline fails the RayJob with DeadlineExceeded
// and no retry, whatever backoffLimit allows.
func TestActiveDeadline(t *testing.T) {
	w := newWorld(t)
	w.Create(rayJob("deadline", rayv1.HTTPMode, func(j *rayv1.RayJob) {
		j.Spec.ActiveDeadlineSeconds = ptr.To[int32](60)
		j.Spec.BackoffLimit = ptr.To[int32](3)
	}))
	w.makeClusterReady(w.RayJobCluster("deadline").Name)
	w.WaitRayJob("deadline", rayv1.JobDeploymentStatusRunning)
	w.clock.Step(61 * time.Second)
	job := w.WaitRayJob("deadline", rayv1.JobDeploymentStatusFailed)
	if job.Status.Reason != rayv1.DeadlineExceeded || *job.Status.Failed != 1 {
		t.Errorf("reason %q failed %d", job.Status.Reason, *job.Status.Failed)
	}
	// Give a retry a chance to (wrongly) start.
	w.Consistently("the RayJob Failed, not retried", 4*time.Second, func() (bool, error) {
		if job := w.RayJob("deadline"); job.Status.JobDeploymentStatus != rayv1.JobDeploymentStatusFailed {
			return false, fmt.Errorf("deadline was retried: %q", job.Status.JobDeploymentStatus)
		}
		return true, nil
	})
}

// TestSuspendResume: suspending releases the cluster and the submitter;
// resuming starts over on a new cluster.
func TestSuspendResume(t *testing.T) {
	w := newWorld(t)
	w.Create(rayJob("suspend", rayv1.K8sJobMode, func(j *rayv1.RayJob) { j.Spec.ShutdownAfterJobFinishes = true }))
	first := w.RayJobCluster("suspend")
	w.makeClusterReady(first.Name)
	w.WaitRayJob("suspend", rayv1.JobDeploymentStatusRunning)

	job := &rayv1.RayJob{ObjectMeta: metav1.ObjectMeta{Name: "suspend", Namespace: w.NS}}
	w.Update(job, func() { job.Spec.Suspend = true })
	w.WaitRayJob("suspend", rayv1.JobDeploymentStatusSuspended)
	if len(w.clusters()) != 0 || len(w.submitterJobs()) != 0 {
		t.Fatalf("%d clusters and %d submitter Jobs left while suspended", len(w.clusters()), len(w.submitterJobs()))
	}

	w.Update(job, func() { job.Spec.Suspend = false })
	second := w.RayJobCluster("suspend")
	if second.Name == first.Name {
		t.Errorf("resumed on the old cluster name %q", second.Name)
	}
	w.makeClusterReady(second.Name)
	w.WaitRayJob("suspend", rayv1.JobDeploymentStatusRunning)
}

// TestSuspendIsAtomic: clearing suspend while Suspending still ends in
// Suspended, with everything released.
func TestSuspendIsAtomic(t *testing.T) {
	w := newWorld(t)
	w.Create(rayJob("atomic", rayv1.K8sJobMode, func(j *rayv1.RayJob) { j.Spec.ShutdownAfterJobFinishes = true }))
	cluster := w.RayJobCluster("atomic")
	// A finalizer keeps the cluster, and so the RayJob in Suspending.
	w.Update(cluster, func() { cluster.Finalizers = []string{"test/hold"} })
	job := &rayv1.RayJob{ObjectMeta: metav1.ObjectMeta{Name: "atomic", Namespace: w.NS}}
	w.Update(job, func() { job.Spec.Suspend = true })
	w.WaitRayJob("atomic", rayv1.JobDeploymentStatusSuspending)
	w.Update(job, func() { job.Spec.Suspend = false })
	w.Update(cluster, func() { cluster.Finalizers = nil })
	// Suspended is passed through at once (suspend is false again); a new
	// attempt on a new cluster shows that the release ran to the end.
	w.Eventually("a new attempt after the suspension", func() (bool, error) {
		job := w.RayJob("atomic")
		return job.Status.JobDeploymentStatus == rayv1.JobDeploymentStatusInitializing &&
			job.Status.RayClusterName != "" && job.Status.RayClusterName != cluster.Name, nil
	})
	if n := len(w.submitterJobs()); n != 0 {
		t.Errorf("%d submitter Jobs after the suspension", n)
	}
}

// TestSubmitterFailureRetriesWithNewSubmitter: in K8sJobMode a failed
// submitter Job fails the attempt with SubmissionFailed; the retry deletes
// the cluster and the submitter Job and starts over with new ones.
func TestSubmitterFailureRetriesWithNewSubmitter(t *testing.T) {
	w := newWorld(t)
	w.Create(rayJob("subfail", rayv1.K8sJobMode, func(j *rayv1.RayJob) { j.Spec.BackoffLimit = ptr.To[int32](1) }))
	first := w.RayJobCluster("subfail")
	w.makeClusterReady(first.Name)
	w.WaitRayJob("subfail", rayv1.JobDeploymentStatusRunning)
	oldSubmitter := w.submitterJobs()[0]

	w.FinishJob("subfail", false)
	w.Eventually("a second attempt with a new submitter Job", func() (bool, error) {
		job := w.RayJob("subfail")
		if job.Status.RayClusterName == "" || job.Status.RayClusterName == first.Name {
			return false, nil
		}
		jobs := w.submitterJobs()
		return len(jobs) == 0 || jobs[0].UID != oldSubmitter.UID, nil
	})
	if job := w.RayJob("subfail"); *job.Status.Failed != 1 {
		t.Errorf("failed %d", *job.Status.Failed)
	}
	w.makeClusterReady(w.RayJobCluster("subfail").Name)
	w.WaitRayJob("subfail", rayv1.JobDeploymentStatusRunning)
	if jobs := w.submitterJobs(); len(jobs) != 1 || jobs[0].UID == oldSubmitter.UID {
		t.Fatalf("submitter Jobs %d", len(jobs))
	}
	w.FinishJob("subfail", false)
	job := w.WaitRayJob("subfail", rayv1.JobDeploymentStatusFailed)
	if job.Status.Reason != rayv1.SubmissionFailed || *job.Status.Failed != 2 {
		t.Errorf("reason %q failed %d", job.Status.Reason, *job.Status.Failed)
	}
}
