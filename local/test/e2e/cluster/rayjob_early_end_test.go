package cluster_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// earlyEndRayJob is a SidecarMode RayJob (name, entrypoint) whose worker
// stays un-Ready far longer than the test: an init container sleeps ten
// minutes before the worker starts. Its head runs the job meanwhile, so the
// RayCluster is not Ready while the job runs and ends, and the RayJob,
// waiting for it in Initializing, never reads the job's status before the
// submitter ends.
const earlyEndRayJob = `
apiVersion: ray.io/v1
kind: RayJob
metadata:
  name: %s
spec:
  submissionMode: SidecarMode
  entrypoint: %s
  shutdownAfterJobFinishes: false
  rayClusterSpec:
    rayVersion: "2.60.0"
    headGroupSpec:
      rayStartParams: {}
      template:
        spec:
          terminationGracePeriodSeconds: 5
          containers:
            - name: ray-head
              image: rayproject/ray:2.60.0
              resources:
                requests: {cpu: 400m, memory: 1Gi}
                limits: {cpu: "1", memory: 2Gi}
    workerGroupSpecs:
      - groupName: workers
        replicas: 1
        minReplicas: 1
        maxReplicas: 1
        rayStartParams: {}
        template:
          spec:
            terminationGracePeriodSeconds: 5
            initContainers:
              - name: hold
                image: rayproject/ray:2.60.0
                command: ["sleep", "600"]
            containers:
              - name: ray-worker
                image: rayproject/ray:2.60.0
                resources:
                  requests: {cpu: 400m, memory: 1Gi}
                  limits: {cpu: "1", memory: 1Gi}
`

// TestSidecarModeJobEndsBeforeClusterIsReady (issue #53, with real Ray):
// two SidecarMode RayJobs whose worker is held un-Ready, so that the head's
// submitter runs each job to its end while the RayJob still waits in
// Initializing. The failing one's submitter (`ray job submit`, blocking)
// exits 1; the RayJob must still end as Ray saw the job (Failed, AppFailed,
// jobStatus FAILED, Ray's message and times), not as a failed submission
// (SubmissionFailed with an empty jobStatus, KubeRay's outcome). The
// succeeding one's submitter exits 0 and the RayJob completes.
//
// The path needs the operator without SidecarSubmitterRestart: with the
// gate, the submitter ends with `ray job logs --follow`, which exits 0
// whatever the job's end, so a failing job never makes it fail. The test
// swaps the suite's operator for one without the gate, which is why it is
// not parallel although it mostly waits.
func TestSidecarModeJobEndsBeforeClusterIsReady(t *testing.T) {
	gates := strings.Replace(suiteFeatureGates, "SidecarSubmitterRestart=true", "SidecarSubmitterRestart=false", 1)
	if gates == suiteFeatureGates {
		t.Fatalf("suiteFeatureGates %q do not turn SidecarSubmitterRestart on", suiteFeatureGates)
	}
	shared.withOperatorGates(t, gates)
	testJobsEndBeforeClusterIsReady(t, 1)
}

// TestSidecarModeJobEndsBeforeClusterIsReadyWithSubmitterRestart is the
// same with the suite's operator, SidecarSubmitterRestart on: both
// submitters exit 0 (`ray job logs --follow`), the RayJobs leave
// Initializing because their submitter ended, and read how the jobs ended
// from the dashboard as Running does.
func TestSidecarModeJobEndsBeforeClusterIsReadyWithSubmitterRestart(t *testing.T) {
	t.Parallel() // mostly waiting: see the package comment (main_test.go)
	testJobsEndBeforeClusterIsReady(t, 0)
}

// testJobsEndBeforeClusterIsReady runs a failing and a succeeding
// earlyEndRayJob at once and checks how they ended; failedExit is the exit
// code of the failing one's submitter.
func testJobsEndBeforeClusterIsReady(t *testing.T, failedExit int32) {
	ns := shared.namespace(t)
	began := time.Now()
	failing := shared.applyManifest(t, ns, "earlyEndRayJob", fmt.Appendf(nil, earlyEndRayJob,
		"early-failure", `python -c "import sys; print('boom'); sys.exit(1)"`)).(*rayv1.RayJob)
	succeeding := shared.applyManifest(t, ns, "earlyEndRayJob", fmt.Appendf(nil, earlyEndRayJob,
		"early-success", `python -c "print('early bird')"`)).(*rayv1.RayJob)

	t.Run("failed", func(t *testing.T) {
		done := shared.waitRayJob(t, ns, failing.Name, rayJobTimeout)
		requireEndedBeforeReady(t, done, failedExit)
		st := done.Status
		if st.JobDeploymentStatus != rayv1.JobDeploymentStatusFailed || st.Reason != rayv1.AppFailed || st.JobStatus != rayv1.JobStatusFailed {
			t.Fatalf("RayJob ended %s, reason %q, jobStatus %q (%s); want Failed, AppFailed, FAILED", st.JobDeploymentStatus, st.Reason, st.JobStatus, st.Message)
		}
		if !strings.Contains(st.Message, rayFailedEntrypointMessage) || !strings.Contains(st.Message, "boom") || strings.Contains(st.Message, "ray-job-submitter") {
			t.Errorf("status.message %q; want Ray's (%q, with the job's output), not the submitter's", st.Message, rayFailedEntrypointMessage)
		}
	})
	t.Run("succeeded", func(t *testing.T) {
		done := shared.waitRayJob(t, ns, succeeding.Name, rayJobTimeout)
		requireEndedBeforeReady(t, done, 0)
		requireSucceeded(t, done, done.Status.RayClusterName)
	})
	t.Logf("both RayJobs ended %v after their creation", time.Since(began).Round(time.Second))
}

// requireEndedBeforeReady fails t unless the RayJob shows the order of
// events the test sets up: its submitter container exited with exitCode,
// its RayCluster is still not Ready, and the RayJob records its own start
// and end and Ray's.
func requireEndedBeforeReady(t *testing.T, job *rayv1.RayJob, exitCode int32) {
	t.Helper()
	st := job.Status
	head := shared.headPod(t, job.Namespace, st.RayClusterName)
	cs, err := shared.submitterStatus(t.Context(), job.Namespace, head)
	if err != nil {
		t.Fatal(err)
	}
	if cs.State.Terminated == nil || cs.State.Terminated.ExitCode != exitCode || cs.RestartCount != 0 {
		t.Errorf("submitter container %+v; want exited %d, never restarted", cs, exitCode)
	}
	cluster := &rayv1.RayCluster{}
	if err := shared.Client.Get(t.Context(), types.NamespacedName{Namespace: job.Namespace, Name: st.RayClusterName}, cluster); err != nil {
		t.Fatal(err)
	}
	if cluster.Status.State == rayv1.Ready || cluster.Status.ReadyWorkerReplicas != 0 {
		t.Errorf("RayCluster %s is %q with %d ready workers: the worker was not held", cluster.Name, cluster.Status.State, cluster.Status.ReadyWorkerReplicas)
	}
	if st.StartTime == nil || st.EndTime == nil || st.RayJobStatusInfo.StartTime == nil || st.RayJobStatusInfo.EndTime == nil {
		t.Errorf("RayJob times: start %v, end %v, Ray's %+v; want all set", st.StartTime, st.EndTime, st.RayJobStatusInfo)
	}
}
