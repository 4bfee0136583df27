package rayjob_test

import (
	"context"
	"testing"
	"time"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/testing/testenv"
)

// rayFailure is the message Ray gives a Ray job whose entrypoint failed.
const rayFailure = "Job entrypoint command failed with exit code 1, last available logs (truncated to 20,000 chars):\nboom"

// endedRayJob is how a Ray job ended before the RayJob read its status:
// status and Ray's message; status "" when the dashboard never knew it.
type endedRayJob struct {
	status  rayv1.JobStatus
	message string
}

// runsAndEnds plays the submitter of jobName: the Ray job appears on the
// dashboard and ends as ended says (nothing when ended.status is "").
func (w *world) runsAndEnds(jobName string, ended endedRayJob) {
	w.T.Helper()
	if ended.status == "" {
		return
	}
	w.submitLikeSubmitter(jobName)
	if !w.dash.SetJobStatus(w.RayJob(jobName).Status.JobID, ended.status, ended.message) {
		w.T.Fatal("the Ray job is not on the dashboard")
	}
}

// wantEnd checks how the RayJob ended: its deployment status, reason, Ray
// job status and message, and Ray's end time when Ray knew the job.
func wantEnd(t *testing.T, job *rayv1.RayJob, reason rayv1.JobFailedReason, status rayv1.JobStatus, message string) {
	t.Helper()
	st := job.Status
	if st.Reason != reason || st.JobStatus != status || st.Message != message {
		t.Errorf("%s: reason %q jobStatus %q message %q; want %q %q %q",
			st.JobDeploymentStatus, st.Reason, st.JobStatus, st.Message, reason, status, message)
	}
	if status != "" && (st.RayJobStatusInfo.StartTime == nil || st.RayJobStatusInfo.EndTime == nil) {
		t.Errorf("Ray job times %+v, want Ray's start and end", st.RayJobStatusInfo)
	}
}

// TestSidecarModeSubmitterFailsBeforeClusterIsReady (issue #53): in SidecarMode the
// head Pod's submitter runs the Ray job while a worker is not Ready yet, so
// the RayJob waits in Initializing and never reads the job's status; the
// submitter then exits 1. A Ray job that failed ends AppFailed with
// jobStatus FAILED and Ray's message (KubeRay, and this operator before:
// SubmissionFailed with an empty jobStatus), one that succeeded (the
// submitter's log stream broke) completes, and only a job the dashboard
// does not know is a failed submission.
func TestSidecarModeSubmitterFailsBeforeClusterIsReady(t *testing.T) {
	exit1 := "Ray head pod container ray-job-submitter terminated with exit code 1: Error"
	for name, tc := range map[string]struct {
		ended   endedRayJob
		want    rayv1.JobDeploymentStatus
		reason  rayv1.JobFailedReason
		message string
	}{
		"failed":    {ended: endedRayJob{rayv1.JobStatusFailed, rayFailure}, want: rayv1.JobDeploymentStatusFailed, reason: rayv1.AppFailed, message: rayFailure},
		"succeeded": {ended: endedRayJob{rayv1.JobStatusSucceeded, "Job finished successfully."}, want: rayv1.JobDeploymentStatusComplete, message: "Job finished successfully."},
		"unknown":   {want: rayv1.JobDeploymentStatusFailed, reason: rayv1.SubmissionFailed, message: exit1},
	} {
		t.Run(name, func(t *testing.T) {
			w := newWorld(t)
			w.Create(rayJob("early", rayv1.SidecarMode))
			pod := w.createHeadPod(w.RayJobCluster("early"))
			w.runsAndEnds("early", tc.ended)
			if err := testenv.TerminateContainer(context.Background(), w.Client, pod, "ray-job-submitter", 1, time.Now()); err != nil {
				t.Fatal(err)
			}
			job := w.WaitRayJob("early", tc.want)
			wantEnd(t, job, tc.reason, tc.ended.status, tc.message)
			if job.Status.RayClusterStatus.State == rayv1.Ready {
				t.Error("the cluster was Ready")
			}
		})
	}
}

// TestK8sJobModeSubmitterFailsBeforeStatusIsRead (issue #53): the K8sJobMode
// submitter Job exists only once the cluster is Ready, so the same order
// comes from the operator being down: the Ray job ran and ended and the
// submitter Job failed before the RayJob read the job's status once. A Ray
// job that failed ends AppFailed with jobStatus FAILED and Ray's message, one
// that succeeded completes, and only a job the dashboard does not know is a
// failed submission.
func TestK8sJobModeSubmitterFailsBeforeStatusIsRead(t *testing.T) {
	jobFailed := "Job submission has failed. Reason: BackoffLimitExceeded. Message: "
	for name, tc := range map[string]struct {
		ended   endedRayJob
		want    rayv1.JobDeploymentStatus
		reason  rayv1.JobFailedReason
		message string
	}{
		"failed":    {ended: endedRayJob{rayv1.JobStatusFailed, rayFailure}, want: rayv1.JobDeploymentStatusFailed, reason: rayv1.AppFailed, message: rayFailure},
		"succeeded": {ended: endedRayJob{rayv1.JobStatusSucceeded, "Job finished successfully."}, want: rayv1.JobDeploymentStatusComplete, message: "Job finished successfully."},
		"unknown":   {want: rayv1.JobDeploymentStatusFailed, reason: rayv1.SubmissionFailed, message: jobFailed},
	} {
		t.Run(name, func(t *testing.T) {
			w := newWorld(t)
			w.Create(rayJob("early", rayv1.K8sJobMode))
			w.makeClusterReady(w.RayJobCluster("early").Name)
			w.WaitRayJob("early", rayv1.JobDeploymentStatusRunning)
			w.op.Stop()
			w.runsAndEnds("early", tc.ended)
			w.FinishJob("early", false)
			w.op.Start()
			wantEnd(t, w.WaitRayJob("early", tc.want), tc.reason, tc.ended.status, tc.message)
		})
	}
}
