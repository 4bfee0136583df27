package submitter

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// testJob returns a RayJob with a submitted status and a one-container head.
func testJob(mutate ...func(*rayv1.RayJob)) *rayv1.RayJob {
	job := &rayv1.RayJob{
		ObjectMeta: metav1.ObjectMeta{Name: "job", Namespace: "ns"},
		Spec: rayv1.RayJobSpec{
			Entrypoint: "  python main.py  ",
			RayClusterSpec: &rayv1.RayClusterSpec{
				RayVersion: "2.9.0",
				HeadGroupSpec: rayv1.HeadGroupSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
					Containers: []corev1.Container{{Name: "ray-head", Image: "rayproject/ray:2.9.0"}},
				}}},
			},
		},
		Status: rayv1.RayJobStatus{JobID: "job-abcde", DashboardURL: "head-svc.ns.svc.cluster.local:8265"},
	}
	for _, m := range mutate {
		m(job)
	}
	return job
}

func cluster(job *rayv1.RayJob) *rayv1.RayCluster {
	return &rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Name: "job-xyz", Namespace: job.Namespace}, Spec: *job.Spec.RayClusterSpec}
}

func TestCommand(t *testing.T) {
	const k8sAddr = "http://head-svc.ns.svc.cluster.local:8265"
	k8sWait := "until " + `python -c "import urllib.request; r=urllib.request.urlopen('` + k8sAddr +
		`/api/gcs_healthz', timeout=10); exit(0 if b'success' in r.read() else 1)"` + ` >/dev/null 2>&1 ; do echo "Waiting for Ray Dashboard GCS to become healthy at ` +
		k8sAddr + ` ..." ; sleep 2 ; done ; `
	// sidecarWait is the SidecarMode loop: the GCS through the dashboard at
	// dashboardPort, then the head's dashboard agent at agentPort.
	sidecarWait := func(dashboardPort, agentPort string) string {
		probe := `python -c "import urllib.request; r=urllib.request.urlopen('http://localhost:%s/api/%s', timeout=10); exit(0 if b'success' in r.read() else 1)" >/dev/null 2>&1`
		return "until " + fmt.Sprintf(probe, dashboardPort, "gcs_healthz") + " && " + fmt.Sprintf(probe, agentPort, "local_raylet_healthz") +
			` ; do echo "Waiting for Ray Dashboard GCS and the head's dashboard agent to become healthy at http://127.0.0.1:` + dashboardPort + ` ..." ; sleep 2 ; done ; `
	}
	tests := map[string]struct {
		job      *rayv1.RayJob
		mode     rayv1.JobSubmissionMode
		restarts bool
		want     string
	}{
		"K8sJobMode checks the status before submitting and follows the logs": {
			job:  testJob(),
			mode: rayv1.K8sJobMode,
			want: k8sWait + "if ! ray job status --address " + k8sAddr + " job-abcde >/dev/null 2>&1 ; then " +
				"ray job submit --address " + k8sAddr + " --no-wait --submission-id job-abcde -- python main.py ; fi ; " +
				"ray job logs --address " + k8sAddr + " --follow job-abcde",
		},
		"K8sJobMode passes runtime env, metadata and entrypoint resources": {
			job: testJob(func(j *rayv1.RayJob) {
				j.Spec.RuntimeEnvYAML = "pip:\n  - requests\n"
				j.Spec.Metadata = map[string]string{"owner": "me"}
				j.Spec.EntrypointNumCpus = 1
				j.Spec.EntrypointNumGpus = 0.5
				j.Spec.EntrypointResources = `{"r": 1}`
			}),
			mode: rayv1.K8sJobMode,
			want: k8sWait + "if ! ray job status --address " + k8sAddr + " job-abcde >/dev/null 2>&1 ; then " +
				"ray job submit --address " + k8sAddr + ` --no-wait --runtime-env-json "{\"pip\":[\"requests\"]}"` +
				` --metadata-json "{\"owner\":\"me\"}" --submission-id job-abcde --entrypoint-num-cpus 1.000000` +
				` --entrypoint-num-gpus 0.500000 --entrypoint-resources "{\"r\": 1}" -- python main.py ; fi ; ` +
				"ray job logs --address " + k8sAddr + " --follow job-abcde",
		},
		"SidecarMode submits once on localhost and blocks": {
			job:  testJob(),
			mode: rayv1.SidecarMode,
			want: sidecarWait("8265", "52365") +
				"ray job submit --address http://127.0.0.1:8265 --submission-id job-abcde -- python main.py ;",
		},
		"SidecarMode uses the head's dashboard port": {
			job: testJob(func(j *rayv1.RayJob) {
				j.Spec.RayClusterSpec.HeadGroupSpec.Template.Spec.Containers[0].Ports = []corev1.ContainerPort{{Name: "dashboard", ContainerPort: 9999}}
			}),
			mode: rayv1.SidecarMode,
			want: sidecarWait("9999", "52365") +
				"ray job submit --address http://127.0.0.1:9999 --submission-id job-abcde -- python main.py ;",
		},
		"SidecarMode waits for the agent on its rayStartParams port": {
			job: testJob(func(j *rayv1.RayJob) {
				j.Spec.RayClusterSpec.HeadGroupSpec.RayStartParams = map[string]string{"dashboard-agent-listen-port": "52999"}
			}),
			mode: rayv1.SidecarMode,
			want: sidecarWait("8265", "52999") +
				"ray job submit --address http://127.0.0.1:8265 --submission-id job-abcde -- python main.py ;",
		},
		// KubeRay's TestBuildJobSubmitCommandWithSidecarModeAndFeatureGate:
		// a restartable sidecar checks the status, submits with --no-wait
		// and follows the logs, as K8sJobMode does, on localhost.
		"SidecarMode with SidecarSubmitterRestart submits only an unknown job and follows it": {
			job: testJob(func(j *rayv1.RayJob) {
				j.Spec.RuntimeEnvYAML = "test: test\n"
				j.Spec.Metadata = map[string]string{"testKey": "testValue"}
				j.Spec.EntrypointNumCpus = 1
				j.Spec.EntrypointNumGpus = 0.5
				j.Spec.EntrypointResources = `{"Custom_1": 1, "Custom_2": 5.5}`
			}),
			mode:     rayv1.SidecarMode,
			restarts: true,
			want: sidecarWait("8265", "52365") +
				"if ! ray job status --address http://127.0.0.1:8265 job-abcde >/dev/null 2>&1 ; then " +
				`ray job submit --address http://127.0.0.1:8265 --no-wait --runtime-env-json "{\"test\":\"test\"}"` +
				` --metadata-json "{\"testKey\":\"testValue\"}" --submission-id job-abcde --entrypoint-num-cpus 1.000000` +
				` --entrypoint-num-gpus 0.500000 --entrypoint-resources "{\"Custom_1\": 1, \"Custom_2\": 5.5}" -- python main.py ; fi ; ` +
				"ray job logs --address http://127.0.0.1:8265 --follow job-abcde",
		},
		"K8sJobMode ignores the sidecar restart setting": {
			job:      testJob(),
			mode:     rayv1.K8sJobMode,
			restarts: true,
			want: k8sWait + "if ! ray job status --address " + k8sAddr + " job-abcde >/dev/null 2>&1 ; then " +
				"ray job submit --address " + k8sAddr + " --no-wait --submission-id job-abcde -- python main.py ; fi ; " +
				"ray job logs --address " + k8sAddr + " --follow job-abcde",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			cmd, err := Command(tc.job, tc.mode, tc.restarts)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, strings.Join(cmd, " ")); diff != "" {
				t.Errorf("command (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCommandErrors(t *testing.T) {
	tests := map[string]struct {
		job  *rayv1.RayJob
		mode rayv1.JobSubmissionMode
	}{
		"HTTPMode has no command": {job: testJob(), mode: rayv1.HTTPMode},
		"bad runtime env":         {job: testJob(func(j *rayv1.RayJob) { j.Spec.RuntimeEnvYAML = "a: [" }), mode: rayv1.K8sJobMode},
		"metadata on old Ray": {job: testJob(func(j *rayv1.RayJob) {
			j.Spec.Metadata = map[string]string{"a": "b"}
			j.Spec.RayClusterSpec.RayVersion = "2.5.0"
		}), mode: rayv1.K8sJobMode},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if _, err := Command(tc.job, tc.mode, false); err == nil {
				t.Error("want an error")
			}
		})
	}
}

func TestJob(t *testing.T) {
	job := testJob()
	got, err := Job(job, cluster(job))
	if err != nil {
		t.Fatal(err)
	}
	cmd, _ := Command(job, rayv1.K8sJobMode, false)
	want := DefaultContainer(job.Spec.RayClusterSpec)
	want.Command = []string{"/bin/bash", "-ce", "--"}
	want.Args = []string{strings.Join(cmd, " ")}
	want.Env = []corev1.EnvVar{
		{Name: "PYTHONUNBUFFERED", Value: "1"},
		{Name: "RAY_DASHBOARD_ADDRESS", Value: "head-svc.ns.svc.cluster.local:8265"},
		{Name: "RAY_JOB_SUBMISSION_ID", Value: "job-abcde"},
	}
	if diff := cmp.Diff(want, got.Spec.Template.Spec.Containers[0]); diff != "" {
		t.Errorf("container (-want +got):\n%s", diff)
	}
	if got.Name != "job" || got.Namespace != "ns" || *got.Spec.BackoffLimit != 2 {
		t.Errorf("name %s/%s backoffLimit %d, want ns/job 2", got.Namespace, got.Name, *got.Spec.BackoffLimit)
	}
	if got.Spec.Template.Spec.RestartPolicy != corev1.RestartPolicyNever || want.Image != "rayproject/ray:2.9.0" {
		t.Errorf("restart policy %q image %q", got.Spec.Template.Spec.RestartPolicy, want.Image)
	}
	wantLabels := map[string]string{
		"ray.io/originated-from-cr-name": "job", "ray.io/originated-from-crd": "RayJob",
		"app.kubernetes.io/created-by": "kuberay-operator",
	}
	if diff := cmp.Diff(wantLabels, got.Labels); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantLabels, got.Spec.Template.Labels); diff != "" {
		t.Errorf("Pod template labels (-want +got):\n%s", diff)
	}
}

func TestJobHonoursUserTemplateAndConfig(t *testing.T) {
	job := testJob(func(j *rayv1.RayJob) {
		j.Spec.SubmitterConfig = &rayv1.SubmitterConfig{BackoffLimit: ptr.To[int32](5)}
		j.Spec.SubmitterPodTemplate = &corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"mine": "kept"}}, Spec: corev1.PodSpec{
			Containers: []corev1.Container{{
				Name: "mine", Image: "my-image", Command: []string{"my-submit"},
				Env: []corev1.EnvVar{{Name: "X", Value: "y"}},
			}},
		}}
	})
	got, err := Job(job, cluster(job))
	if err != nil {
		t.Fatal(err)
	}
	want := corev1.Container{Name: "mine", Image: "my-image", Command: []string{"my-submit"}, Env: []corev1.EnvVar{
		{Name: "X", Value: "y"},
		{Name: "PYTHONUNBUFFERED", Value: "1"},
		{Name: "RAY_DASHBOARD_ADDRESS", Value: "head-svc.ns.svc.cluster.local:8265"},
		{Name: "RAY_JOB_SUBMISSION_ID", Value: "job-abcde"},
	}}
	if diff := cmp.Diff(want, got.Spec.Template.Spec.Containers[0]); diff != "" {
		t.Errorf("container (-want +got):\n%s", diff)
	}
	if got.Spec.Template.Spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("restart policy %q, want Never by default", got.Spec.Template.Spec.RestartPolicy)
	}
	wantLabels := map[string]string{
		"mine": "kept", "ray.io/originated-from-cr-name": "job", "ray.io/originated-from-crd": "RayJob",
		"app.kubernetes.io/created-by": "kuberay-operator",
	}
	if diff := cmp.Diff(wantLabels, got.Spec.Template.Labels); diff != "" {
		t.Errorf("Pod template labels (-want +got):\n%s", diff)
	}
	if len(job.Spec.SubmitterPodTemplate.Labels) != 1 {
		t.Errorf("the RayJob's template labels were modified: %v", job.Spec.SubmitterPodTemplate.Labels)
	}
	if *got.Spec.BackoffLimit != 5 {
		t.Errorf("backoffLimit %d, want 5", *got.Spec.BackoffLimit)
	}
	if job.Spec.SubmitterPodTemplate.Spec.Containers[0].Env[0].Name != "X" || len(job.Spec.SubmitterPodTemplate.Spec.Containers[0].Env) != 1 {
		t.Error("the RayJob's template was modified")
	}
}

func TestSidecarContainerWithAuth(t *testing.T) {
	job := testJob()
	c := cluster(job)
	c.Spec.AuthOptions = &rayv1.AuthOptions{} // no mode means token
	got, err := SidecarContainer(job, c, false)
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != ContainerName || got.Image != "rayproject/ray:2.9.0" {
		t.Errorf("name %q image %q", got.Name, got.Image)
	}
	wantTail := []corev1.EnvVar{
		{Name: "RAY_AUTH_MODE", Value: "token"},
		{Name: "RAY_AUTH_TOKEN", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: "job-xyz"}, Key: "auth_token",
		}}},
	}
	if diff := cmp.Diff(wantTail, got.Env[3:]); diff != "" {
		t.Errorf("auth env (-want +got):\n%s", diff)
	}
	if !strings.Contains(got.Args[0], "ray job submit --address http://127.0.0.1:8265 --submission-id job-abcde") {
		t.Errorf("args %q", got.Args[0])
	}
	if got.RestartPolicy != nil {
		t.Errorf("restartPolicy %v without SidecarSubmitterRestart, want unset", *got.RestartPolicy)
	}
}

// KubeRay's TestGetSubmitterContainerWithFeatureGate: with
// SidecarSubmitterRestart the submitter container restarts OnFailure and
// runs the status-checking command.
func TestSidecarContainerRestartsOnFailure(t *testing.T) {
	job := testJob()
	got, err := SidecarContainer(job, cluster(job), true)
	if err != nil {
		t.Fatal(err)
	}
	if got.RestartPolicy == nil || *got.RestartPolicy != corev1.ContainerRestartPolicyOnFailure {
		t.Fatalf("restartPolicy %v, want OnFailure", got.RestartPolicy)
	}
	cmd, err := Command(job, rayv1.SidecarMode, true)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"/bin/bash", "-ce", "--", strings.Join(cmd, " ")}, append(got.Command, got.Args...)); diff != "" {
		t.Errorf("command (-want +got):\n%s", diff)
	}
}
