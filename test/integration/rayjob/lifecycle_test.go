package rayjob_test

import (
	"context"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/dashboard"
	"github.com/ray-operator/ray-operator/internal/testing/testenv"
)

// submitLikeSubmitter plays the submitter Pod (or sidecar): the Ray job of
// jobName appears on the dashboard, RUNNING.
func (w *world) submitLikeSubmitter(jobName string) {
	w.T.Helper()
	job := w.RayJob(jobName)
	w.dash.AddJob(dashboard.JobInfo{Type: "SUBMISSION", SubmissionID: job.Status.JobID, JobStatus: rayv1.JobStatusRunning, StartTime: uint64(w.clock.Now().UnixMilli())})
}

func TestLifecycleK8sJobMode(t *testing.T) {
	w := newWorld(t)
	w.Create(rayJob("k8s", rayv1.K8sJobMode, func(j *rayv1.RayJob) { j.Spec.ShutdownAfterJobFinishes = true }))

	w.WaitRayJob("k8s", rayv1.JobDeploymentStatusInitializing)
	cluster := w.RayJobCluster("k8s")
	if ref := metav1.GetControllerOf(cluster); ref == nil || ref.Kind != "RayJob" || ref.Name != "k8s" {
		t.Errorf("cluster controller reference %v", ref)
	}
	if cluster.Labels[rayv1.LabelOriginatedFromCRName] != "k8s" || cluster.Labels[rayv1.LabelOriginatedFromCRD] != "RayJob" {
		t.Errorf("cluster labels %v", cluster.Labels)
	}
	if job := w.RayJob("k8s"); len(job.Finalizers) != 1 || job.Finalizers[0] != rayv1.RayJobStopJobFinalizer {
		t.Errorf("finalizers %v", job.Finalizers)
	}

	w.makeClusterReady(cluster.Name)
	job := w.WaitRayJob("k8s", rayv1.JobDeploymentStatusRunning)
	if want := cluster.Name + "-head-svc." + w.NS + ".svc.cluster.local:8265"; job.Status.DashboardURL != want {
		t.Errorf("dashboard URL %q, want %q", job.Status.DashboardURL, want)
	}
	submitter := &batchv1.Job{}
	if err := w.Client.Get(context.Background(), client.ObjectKey{Namespace: w.NS, Name: "k8s"}, submitter); err != nil {
		t.Fatalf("submitter Job: %v", err)
	}
	if *submitter.Spec.BackoffLimit != 2 || !strings.Contains(submitter.Spec.Template.Spec.Containers[0].Args[0], "ray job submit") {
		t.Errorf("submitter backoffLimit %d args %v", *submitter.Spec.BackoffLimit, submitter.Spec.Template.Spec.Containers[0].Args)
	}

	w.submitLikeSubmitter("k8s")
	w.Eventually("the job status RUNNING", func() (bool, error) { return w.RayJob("k8s").Status.JobStatus == rayv1.JobStatusRunning, nil })
	w.Eventually("the RayJob head Service", func() (bool, error) {
		svc := &corev1.Service{}
		err := w.Client.Get(context.Background(), client.ObjectKey{Namespace: w.NS, Name: "k8s-head-svc"}, svc)
		return err == nil && svc.Spec.Selector[rayv1.LabelCluster] == cluster.Name, client.IgnoreNotFound(err)
	})

	w.setRayJobStatus("k8s", rayv1.JobStatusSucceeded)
	w.FinishJob("k8s", true)
	job = w.WaitRayJob("k8s", rayv1.JobDeploymentStatusComplete)
	if job.Status.JobStatus != rayv1.JobStatusSucceeded || *job.Status.Succeeded != 1 || job.Status.EndTime == nil {
		t.Errorf("status %+v", job.Status)
	}
	w.Eventually("the cluster to be deleted (shutdownAfterJobFinishes)", func() (bool, error) { return len(w.clusters()) == 0, nil })
	if len(w.submitterJobs()) != 1 {
		t.Error("the finished submitter Job should be kept for its logs")
	}
}

func TestLifecycleHTTPMode(t *testing.T) {
	w := newWorld(t)
	w.Create(rayJob("http", rayv1.HTTPMode))
	w.makeClusterReady(w.RayJobCluster("http").Name)
	w.WaitRayJob("http", rayv1.JobDeploymentStatusRunning)
	w.Eventually("the operator to submit", func() (bool, error) { return len(w.dash.Submissions()) == 1, nil })
	sub := w.dash.Submissions()[0]
	if sub.SubmissionID != w.RayJob("http").Status.JobID || sub.Entrypoint != "python -c 'print(1)'" {
		t.Errorf("submission %+v", sub)
	}
	w.setRayJobStatus("http", rayv1.JobStatusFailed)
	job := w.WaitRayJob("http", rayv1.JobDeploymentStatusFailed)
	if job.Status.Reason != rayv1.AppFailed || len(w.submitterJobs()) != 0 || len(w.dash.Submissions()) != 1 {
		t.Errorf("reason %q, %d submitter Jobs, %d submissions", job.Status.Reason, len(w.submitterJobs()), len(w.dash.Submissions()))
	}
}

func TestLifecycleHTTPModeResubmitsOnANewHead(t *testing.T) {
	w := newWorld(t)
	w.Create(rayJob("resubmit", rayv1.HTTPMode))
	w.makeClusterReady(w.RayJobCluster("resubmit").Name)
	w.Eventually("the first submission", func() (bool, error) { return len(w.dash.Submissions()) == 1, nil })
	w.dash.ForgetJob(w.RayJob("resubmit").Status.JobID)
	w.Eventually("a resubmission", func() (bool, error) { return len(w.dash.Submissions()) == 2, nil })
}

func TestLifecycleInteractiveMode(t *testing.T) {
	w := newWorld(t)
	w.Create(rayJob("interactive", rayv1.InteractiveMode))
	w.makeClusterReady(w.RayJobCluster("interactive").Name)
	w.WaitRayJob("interactive", rayv1.JobDeploymentStatusWaiting)

	w.dash.AddJob(dashboard.JobInfo{SubmissionID: "users-job", JobStatus: rayv1.JobStatusRunning, StartTime: uint64(w.clock.Now().UnixMilli())})
	job := &rayv1.RayJob{ObjectMeta: metav1.ObjectMeta{Name: "interactive", Namespace: w.NS}}
	w.Update(job, func() { job.Spec.JobID = "users-job" })
	w.WaitRayJob("interactive", rayv1.JobDeploymentStatusRunning)
	w.dash.SetJobStatus("users-job", rayv1.JobStatusSucceeded, "")
	done := w.WaitRayJob("interactive", rayv1.JobDeploymentStatusComplete)
	if done.Status.JobID != "users-job" || len(w.dash.Submissions()) != 0 {
		t.Errorf("job id %q, %d submissions", done.Status.JobID, len(w.dash.Submissions()))
	}
}

func TestLifecycleSidecarMode(t *testing.T) {
	w := newWorld(t)
	w.Create(rayJob("sidecar", rayv1.SidecarMode))
	cluster := w.RayJobCluster("sidecar")
	head := cluster.Spec.HeadGroupSpec.Template.Spec
	if len(head.Containers) != 2 || head.Containers[1].Name != "ray-job-submitter" || head.RestartPolicy != corev1.RestartPolicyNever ||
		cluster.Annotations[rayv1.AnnotationDisableProvisionedHeadRestart] != "true" {
		t.Fatalf("head template %+v annotations %v", head, cluster.Annotations)
	}

	pod := w.createHeadPod(cluster)
	w.makeClusterReady(cluster.Name)
	w.WaitRayJob("sidecar", rayv1.JobDeploymentStatusRunning)
	if len(w.submitterJobs()) != 0 {
		t.Error("SidecarMode created a submitter Job")
	}
	w.submitLikeSubmitter("sidecar")
	w.setRayJobStatus("sidecar", rayv1.JobStatusSucceeded)
	w.terminateSidecar(pod)
	w.WaitRayJob("sidecar", rayv1.JobDeploymentStatusComplete)
}

// terminateSidecar plays the kubelet when the sidecar submitter of the
// head Pod exits 0.
func (w *world) terminateSidecar(pod *corev1.Pod) {
	w.T.Helper()
	if err := testenv.TerminateContainer(context.Background(), w.Client, pod, "ray-job-submitter", 0, time.Now()); err != nil {
		w.T.Fatal(err)
	}
}

// TestLifecycleSidecarModeJobEndsBeforeClusterIsReady: a short Ray job
// whose sidecar exits before the RayCluster is seen Ready (its workers
// still starting, or the operator down meanwhile) still completes the
// RayJob. The head Pod is not Ready once the sidecar exited, so the
// cluster never will be, and the RayJob waited in Initializing forever.
// Found by the chaos suite (test/integration/rayjobchaos).
func TestLifecycleSidecarModeJobEndsBeforeClusterIsReady(t *testing.T) {
	w := newWorld(t)
	w.Create(rayJob("quick", rayv1.SidecarMode))
	pod := w.createHeadPod(w.RayJobCluster("quick"))
	w.submitLikeSubmitter("quick")
	w.setRayJobStatus("quick", rayv1.JobStatusSucceeded)
	w.terminateSidecar(pod)
	job := w.WaitRayJob("quick", rayv1.JobDeploymentStatusComplete)
	if job.Status.JobStatus != rayv1.JobStatusSucceeded || job.Status.RayClusterStatus.State == rayv1.Ready {
		t.Errorf("job status %q, cluster state %q; want SUCCEEDED on a cluster never Ready", job.Status.JobStatus, job.Status.RayClusterStatus.State)
	}
}

// createHeadPod creates the head Pod of cluster from its template, as the
// RayCluster controller would (SidecarMode: with the submitter).
func (w *world) createHeadPod(cluster *rayv1.RayCluster) *corev1.Pod {
	w.T.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: cluster.Name + "-head", Labels: map[string]string{
			rayv1.LabelCluster: cluster.Name, rayv1.LabelNodeType: string(rayv1.HeadNode)}},
		Spec: *cluster.Spec.HeadGroupSpec.Template.Spec.DeepCopy(),
	}
	w.Create(pod)
	return pod
}
