package local_test

import (
	"strings"
	"testing"
	"time"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// rayJobTimeout bounds a RayJob from apply to a terminal state: a head and
// a worker start (about 15 s each on an idle 2-core machine), the submitter
// runs `ray job submit`, and the entrypoint runs.
const rayJobTimeout = 8 * time.Minute

// TestSampleK8sJobMode: the README's walk-through. The K8sJobMode sample
// reaches SUCCEEDED, and the submitter's `kubectl logs` show what the
// entrypoint printed.
func TestSampleK8sJobMode(t *testing.T) {
	ns := shared.namespace(t)
	job := shared.applySample(t, ns, "ray-job.k8s-job-mode.yaml").(*rayv1.RayJob)
	done := shared.waitRayJob(t, ns, job.Name, rayJobTimeout)
	if done.Status.JobStatus != rayv1.JobStatusSucceeded || done.Status.JobDeploymentStatus != rayv1.JobDeploymentStatusComplete {
		t.Fatalf("RayJob ended %s/%s (%s), want SUCCEEDED/Complete", done.Status.JobStatus, done.Status.JobDeploymentStatus, done.Status.Message)
	}
	logs := shared.submitterLogs(t, ns, job.Name)
	if !strings.Contains(logs, "'CPU'") || !strings.Contains(logs, "succeeded") {
		t.Fatalf("the submitter's logs lack the entrypoint's output (ray.cluster_resources()) or the success line:\n%s", logs)
	}
}
