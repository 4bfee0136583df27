package cluster_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// jobFailsBeforeReadyOutput is what the failing entrypoint of
// jobFailsBeforeReadyManifest prints; Ray appends it to its message.
const jobFailsBeforeReadyOutput = "failing before the cluster is ready"

// jobFailsBeforeReadyManifest is a SidecarMode RayJob, as KubeRay's e2e
// test "Failing RayJob without cluster shutdown after finished" has it (the
// entrypoint exits 1, shutdownAfterJobFinishes false), whose one worker is
// held un-Ready by an init container that sleeps far longer than the test:
// the head's submitter runs the job, and the job fails, while the RayCluster
// is not Ready and the RayJob still waits in Initializing.
const jobFailsBeforeReadyManifest = `
apiVersion: ray.io/v1
kind: RayJob
metadata:
  name: rayjob-fails-before-ready
spec:
  submissionMode: SidecarMode
  entrypoint: python -c "import sys; print('` + jobFailsBeforeReadyOutput + `'); sys.exit(1)"
  shutdownAfterJobFinishes: false
  rayClusterSpec:
    rayVersion: "2.52.0"
    headGroupSpec:
      rayStartParams: {}
      template:
        spec:
          containers:
            - name: ray-head
              image: rayproject/ray:2.52.0
              resources:
                requests:
                  cpu: 500m
                  memory: 2Gi
                limits:
                  cpu: "1"
                  memory: 2Gi
    workerGroupSpecs:
      - groupName: slow
        replicas: 1
        minReplicas: 1
        maxReplicas: 1
        rayStartParams: {}
        template:
          spec:
            initContainers:
              - name: slow-start
                image: rayproject/ray:2.52.0
                command: ["sleep", "1800"]
            containers:
              - name: ray-worker
                image: rayproject/ray:2.52.0
                resources:
                  requests:
                    cpu: 200m
                    memory: 1Gi
                  limits:
                    cpu: 500m
                    memory: 1Gi
`

// TestSidecarModeJobFailsBeforeClusterIsReady (issue #53): with real Ray, a
// SidecarMode RayJob whose entrypoint fails while its worker is still held
// un-Ready ends as KubeRay's e2e test expects it: Failed, reason AppFailed,
// jobStatus FAILED and Ray's message, never SubmissionFailed with an empty
// jobStatus. The RayJob never saw its cluster Ready and never read the job's
// status before the submitter ended.
//
// The suite's operator runs with SidecarSubmitterRestart, whose submitter
// follows the job with `ray job logs --follow` and exits 0 when the job
// fails; without the gate (`make run`'s default) it runs a blocking
// `ray job submit` that exits 1, the path of the issue, which the envtest
// TestSidecarModeSubmitterFailsBeforeClusterIsReady covers. The submitter's exit
// is logged either way.
func TestSidecarModeJobFailsBeforeClusterIsReady(t *testing.T) {
	ns := shared.namespace(t)
	job := shared.applyManifest(t, ns, "a failing RayJob with a slow worker", []byte(jobFailsBeforeReadyManifest)).(*rayv1.RayJob)
	done := shared.waitRayJob(t, ns, job.Name, rayJobTimeout)
	st := done.Status
	if st.JobDeploymentStatus != rayv1.JobDeploymentStatusFailed || st.Reason != rayv1.AppFailed || st.JobStatus != rayv1.JobStatusFailed {
		t.Fatalf("RayJob ended %s, reason %q, jobStatus %q (%s); want Failed, AppFailed, FAILED",
			st.JobDeploymentStatus, st.Reason, st.JobStatus, st.Message)
	}
	if !strings.Contains(st.Message, rayFailedEntrypointMessage) || !strings.Contains(st.Message, jobFailsBeforeReadyOutput) {
		t.Errorf("status.message lacks Ray's message (%q, %q):\n%s", rayFailedEntrypointMessage, jobFailsBeforeReadyOutput, st.Message)
	}
	if st.RayJobStatusInfo.StartTime == nil || st.RayJobStatusInfo.EndTime == nil {
		t.Errorf("Ray job times %+v, want Ray's start and end", st.RayJobStatusInfo)
	}
	if st.RayClusterStatus.State == rayv1.Ready {
		t.Errorf("the RayJob saw its cluster Ready; the test needs it not Ready while the job runs")
	}
	workers, err := shared.rayPods(t.Context(), ns, st.RayClusterName, string(rayv1.WorkerNode))
	if err != nil || len(workers) != 1 {
		t.Fatalf("worker Pods: %d (%v), want 1", len(workers), err)
	}
	if podReady(&workers[0]) == corev1.ConditionTrue {
		t.Errorf("worker Pod %s is Ready; its init container should still hold it", workers[0].Name)
	}
	head := shared.headPod(t, ns, st.RayClusterName)
	if sub, err := shared.submitterStatus(t.Context(), ns, head); err == nil {
		t.Logf("submitter container: state %+v, restarts %d", sub.State, sub.RestartCount)
	}
}
