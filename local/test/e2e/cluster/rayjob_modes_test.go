package cluster_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/remotecommand"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// sampleCodeOutput is what the samples' ConfigMap code (sample_code.py)
// prints when it runs with the samples' runtime environment: the sum its
// Ray tasks computed, the version and location of the package that
// environment pip-installed (a pip runtime environment lives under the
// session's runtime_resources/pip), and the variable it sets.
var sampleCodeOutput = []string{
	"sum of squares: 30",
	"termcolor 3.3.0 imported from ",
	"/runtime_resources/pip/",
	"GREETING=hello from the runtime environment",
}

// failingEntrypoint fails in a Ray task, so the driver ends with Ray's
// error for it.
const failingEntrypoint = `python -c "import ray; ray.init(); ray.get(ray.remote(lambda: 1 / 0).remote())"`

// Ray's words for a job whose entrypoint failed, which KubeRay copies from
// the dashboard into the RayJob's status.message, and the task's error in
// the logs Ray appends to them.
const (
	rayFailedEntrypointMessage = "Job entrypoint command failed with exit code 1"
	rayTaskErrorMessage        = "ZeroDivisionError: division by zero"
)

// interactiveSubmissionID is the submission id the InteractiveMode test
// submits under and then writes into spec.jobId.
const interactiveSubmissionID = "interactive-sample-1"

// TestRayJobModesOnSharedCluster: the cluster-selector sample's RayCluster,
// whose head mounts the sample's code from its ConfigMap, serves four
// RayJobs at once through clusterSelector: the sample's K8sJobMode RayJob,
// the same job in HTTPMode, a K8sJobMode RayJob whose entrypoint fails, and
// an InteractiveMode RayJob that the test submits to from the head Pod.
// Each mode's own machinery runs (submitter Job, the operator's HTTP
// submission, the user's `ray job submit`); only the cluster is shared.
func TestRayJobModesOnSharedCluster(t *testing.T) {
	ns := shared.namespace(t)
	k8sJob := shared.applySample(t, ns, "ray-job.cluster-selector.yaml").(*rayv1.RayJob)
	httpJob := rayJobVariant(k8sJob, "rayjob-http-mode", func(spec *rayv1.RayJobSpec) {
		spec.SubmissionMode = rayv1.HTTPMode
		spec.SubmitterPodTemplate = nil
	})
	failingJob := rayJobVariant(k8sJob, "rayjob-failing", func(spec *rayv1.RayJobSpec) {
		spec.Entrypoint = failingEntrypoint
	})
	interactiveJob := rayJobVariant(k8sJob, "rayjob-interactive-mode", func(spec *rayv1.RayJobSpec) {
		spec.SubmissionMode = rayv1.InteractiveMode
		spec.Entrypoint, spec.RuntimeEnvYAML, spec.SubmitterPodTemplate = "", "", nil
	})
	for _, job := range []*rayv1.RayJob{httpJob, failingJob, interactiveJob} {
		if err := shared.Client.Create(t.Context(), job); err != nil {
			t.Fatalf("creating RayJob %s: %v", job.Name, err)
		}
	}
	clusterName := k8sJob.Spec.ClusterSelector[rayv1.LabelCluster]

	// InteractiveMode first: the other RayJobs run meanwhile.
	t.Run("InteractiveMode", func(t *testing.T) {
		testInteractiveMode(t, ns, interactiveJob.Name, k8sJob.Spec.RuntimeEnvYAML)
	})
	t.Run("K8sJobMode", func(t *testing.T) {
		done := shared.waitRayJob(t, ns, k8sJob.Name, rayJobTimeout)
		requireSucceeded(t, done, clusterName)
		logs := shared.submitterLogs(t, ns, k8sJob.Name)
		requireSampleOutput(t, "the submitter's logs", logs)
	})
	t.Run("HTTPMode", func(t *testing.T) {
		done := shared.waitRayJob(t, ns, httpJob.Name, rayJobTimeout)
		requireSucceeded(t, done, clusterName)
		err := shared.Client.Get(t.Context(), types.NamespacedName{Namespace: ns, Name: httpJob.Name}, &batchv1.Job{})
		if !apierrors.IsNotFound(err) {
			t.Errorf("HTTPMode has no submitter Job, but getting Job %s says %v", httpJob.Name, err)
		}
	})
	t.Run("failing entrypoint", func(t *testing.T) {
		done := shared.waitRayJob(t, ns, failingJob.Name, rayJobTimeout)
		st := done.Status
		if st.JobDeploymentStatus != rayv1.JobDeploymentStatusFailed || st.JobStatus != rayv1.JobStatusFailed || st.Reason != rayv1.AppFailed {
			t.Fatalf("RayJob ended %s/%s, reason %q (%s); want Failed/FAILED, reason AppFailed", st.JobDeploymentStatus, st.JobStatus, st.Reason, st.Message)
		}
		if !strings.Contains(st.Message, rayFailedEntrypointMessage) || !strings.Contains(st.Message, rayTaskErrorMessage) {
			t.Errorf("status.message lacks Ray's error (%q, %q):\n%s", rayFailedEntrypointMessage, rayTaskErrorMessage, st.Message)
		}
	})
	t.Run("the selected cluster stays", func(t *testing.T) {
		cluster := &rayv1.RayCluster{}
		if err := shared.Client.Get(t.Context(), types.NamespacedName{Namespace: ns, Name: clusterName}, cluster); err != nil {
			t.Fatalf("RayCluster %s: %v", clusterName, err)
		}
		if cluster.DeletionTimestamp != nil || len(cluster.OwnerReferences) > 0 {
			t.Errorf("RayCluster %s is deleted (%v) or owned (%v) after its RayJobs finished", clusterName, cluster.DeletionTimestamp, cluster.OwnerReferences)
		}
	})
}

// testInteractiveMode waits until the RayJob waits for a job id, submits
// the sample's code with `ray job submit` from its cluster's head Pod (as
// `kubectl exec` would) to the dashboard the RayJob reports, sets
// spec.jobId to the submission id, and waits for SUCCEEDED; `ray job logs`
// then shows what the code printed.
func testInteractiveMode(t *testing.T, ns, name, runtimeEnvYAML string) {
	waiting := shared.waitRayJobState(t, ns, name, rayJobTimeout, func(job *rayv1.RayJob) bool {
		return job.Status.JobDeploymentStatus == rayv1.JobDeploymentStatusWaiting
	})
	if waiting.Status.JobID != "" || waiting.Status.DashboardURL == "" {
		t.Fatalf("a Waiting InteractiveMode RayJob has job id %q (want none) and dashboard URL %q (want one)", waiting.Status.JobID, waiting.Status.DashboardURL)
	}
	runtimeEnv, err := yaml.YAMLToJSON([]byte(runtimeEnvYAML))
	if err != nil {
		t.Fatal(err)
	}
	head := shared.headPod(t, ns, waiting.Status.RayClusterName)
	address := "http://" + waiting.Status.DashboardURL
	out := shared.execRay(t, ns, head, "job", "submit", "--address", address, "--submission-id", interactiveSubmissionID,
		"--no-wait", "--runtime-env-json", string(runtimeEnv), "--", "python", "/home/ray/samples/sample_code.py")
	if !strings.Contains(out, "submitted successfully") {
		t.Fatalf("ray job submit did not report a submission:\n%s", out)
	}
	patch := fmt.Appendf(nil, `{"spec":{"jobId":%q}}`, interactiveSubmissionID)
	if err := shared.Client.Patch(t.Context(), waiting, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatalf("setting spec.jobId: %v", err)
	}
	done := shared.waitRayJob(t, ns, name, rayJobTimeout)
	requireSucceeded(t, done, waiting.Status.RayClusterName)
	if done.Status.JobID != interactiveSubmissionID {
		t.Errorf("status.jobId is %q, want the submitted %q", done.Status.JobID, interactiveSubmissionID)
	}
	logs := shared.execRay(t, ns, head, "job", "logs", "--address", address, interactiveSubmissionID)
	requireSampleOutput(t, "ray job logs", logs)
}

// TestSampleSidecarMode: the SidecarMode sample reaches SUCCEEDED, and the
// `kubectl logs` of the submitter container in the head Pod show what the
// ConfigMap's code printed with the pip runtime environment.
func TestSampleSidecarMode(t *testing.T) {
	ns := shared.namespace(t)
	job := shared.applySample(t, ns, "ray-job.sidecar-mode.yaml").(*rayv1.RayJob)
	done := shared.waitRayJob(t, ns, job.Name, rayJobTimeout)
	requireSucceeded(t, done, done.Status.RayClusterName)
	head := shared.headPod(t, ns, done.Status.RayClusterName)
	logs := shared.logs(t.Context(), ns, head, "ray-job-submitter", nil)
	requireSampleOutput(t, "the sidecar submitter's logs", logs)
}

// rayJobVariant is a new RayJob named name with base's labels and spec,
// changed by edit.
func rayJobVariant(base *rayv1.RayJob, name string, edit func(*rayv1.RayJobSpec)) *rayv1.RayJob {
	job := &rayv1.RayJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: base.Namespace, Name: name, Labels: base.Labels},
		Spec:       *base.Spec.DeepCopy(),
	}
	edit(&job.Spec)
	return job
}

// requireSucceeded fails t unless the RayJob completed with SUCCEEDED on the
// cluster named cluster.
func requireSucceeded(t *testing.T, job *rayv1.RayJob, cluster string) {
	t.Helper()
	st := job.Status
	if st.JobStatus != rayv1.JobStatusSucceeded || st.JobDeploymentStatus != rayv1.JobDeploymentStatusComplete {
		t.Fatalf("RayJob %s ended %s/%s, reason %q (%s); want SUCCEEDED/Complete", job.Name, st.JobStatus, st.JobDeploymentStatus, st.Reason, st.Message)
	}
	if st.RayClusterName != cluster {
		t.Errorf("RayJob %s ran on RayCluster %q, want %q", job.Name, st.RayClusterName, cluster)
	}
}

// requireSampleOutput fails t unless out (named what) holds every line of
// sampleCodeOutput.
func requireSampleOutput(t *testing.T, what, out string) {
	t.Helper()
	for _, want := range sampleCodeOutput {
		if !strings.Contains(out, want) {
			t.Fatalf("%s lack %q, which the sample's code prints:\n%s", what, want, out)
		}
	}
}

// waitRayJobState waits until done holds for the RayJob and returns it.
func (s *suite) waitRayJobState(t *testing.T, ns, name string, timeout time.Duration, done func(*rayv1.RayJob) bool) *rayv1.RayJob {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), timeout)
	defer cancel()
	job := &rayv1.RayJob{}
	err := poll(ctx, func() (bool, error) {
		if err := s.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, job); err != nil {
			return false, err
		}
		st := job.Status
		return done(job), fmt.Errorf("deployment %q, job %q, message %q", st.JobDeploymentStatus, st.JobStatus, st.Message)
	})
	if err != nil {
		t.Fatalf("RayJob %s: %v", name, err)
	}
	return job
}

// headPod returns the name of the head Pod of the RayCluster named cluster.
func (s *suite) headPod(t *testing.T, ns, cluster string) string {
	t.Helper()
	pods := &corev1.PodList{}
	err := s.Client.List(t.Context(), pods, client.InNamespace(ns),
		client.MatchingLabels{rayv1.LabelCluster: cluster, rayv1.LabelNodeType: string(rayv1.HeadNode)})
	if err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) != 1 {
		t.Fatalf("RayCluster %s has %d head Pods, want 1", cluster, len(pods.Items))
	}
	return pods.Items[0].Name
}

// execRay runs the ray CLI with args in the ray-head container of pod, as
// `kubectl exec` does (through the API server and the node's kubelet API),
// and returns what it printed (stdout, then stderr); it fails t when the
// command fails.
func (s *suite) execRay(t *testing.T, ns, pod string, args ...string) string {
	t.Helper()
	req := s.Clientset.CoreV1().RESTClient().Post().Resource("pods").Namespace(ns).Name(pod).SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{Container: "ray-head", Command: append([]string{"ray"}, args...), Stdout: true, Stderr: true}, scheme.ParameterCodec)
	exec, err := remotecommand.NewSPDYExecutor(s.Cluster.RESTConfig(), http.MethodPost, req.URL())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer // written by two goroutines
	err = exec.StreamWithContext(ctx, remotecommand.StreamOptions{Stdout: &stdout, Stderr: &stderr})
	out := stdout.String() + stderr.String()
	if err != nil {
		t.Fatalf("ray %s in %s: %v\n%s", strings.Join(args, " "), pod, err, out)
	}
	return out
}
