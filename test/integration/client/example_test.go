package client

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/testing/testenv"
	rayv1ac "github.com/ray-operator/ray-operator/pkg/client/applyconfiguration/ray/v1"
	"github.com/ray-operator/ray-operator/pkg/client/clientset/versioned"
)

// exampleManager is the field manager of examples/client.
const exampleManager = "ray-client-example"

// TestExampleProgram runs examples/client, the program docs/client.md
// shows, against the API server: it applies its RayJob, and exits once the
// test (standing in for the operator) applies a final status, with the
// job's outcome as exit code.
func TestExampleProgram(t *testing.T) {
	env := testenv.Shared(t)
	cs, err := versioned.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	binary := buildExample(t)
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, env.Kubeconfig, 0o600); err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		status     *rayv1ac.RayJobStatusApplyConfiguration
		wantExit   int
		wantOutput string
	}{
		"succeeded": {
			status:     rayv1ac.RayJobStatus().WithJobStatus(rayv1.JobStatusSucceeded).WithJobDeploymentStatus(rayv1.JobDeploymentStatusComplete),
			wantOutput: "RayJob hello: SUCCEEDED (Complete)\n",
		},
		"failed": {
			status: rayv1ac.RayJobStatus().WithJobStatus(rayv1.JobStatusFailed).WithJobDeploymentStatus(rayv1.JobDeploymentStatusFailed).
				WithMessage("entrypoint exited with 1"),
			wantExit:   1,
			wantOutput: "RayJob hello: FAILED (Failed)\nthe job did not succeed: entrypoint exited with 1\n",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ns := env.Namespace(t)
			var out bytes.Buffer
			cmd := exec.CommandContext(t.Context(), binary, "--kubeconfig", kubeconfig, "--namespace", ns, "--name", "hello", "--timeout", "1m")
			cmd.Stdout, cmd.Stderr = &out, &out
			// As a user runs it: not with the test run's cache mutation
			// detector, whose warning client-go prints on stderr.
			cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "KUBE_CACHE_MUTATION_DETECTOR=") })
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			job := waitExampleJob(t, cs, ns)
			if job.Spec.Entrypoint == "" || job.Spec.RayClusterSpec == nil || !job.Spec.ShutdownAfterJobFinishes {
				t.Errorf("applied spec lacks the example's entrypoint, cluster or shutdown: %+v", job.Spec)
			}
			if !managedBy(job, exampleManager, metav1.ManagedFieldsOperationApply) {
				t.Errorf("managed fields %+v have no Apply entry of %s", job.GetManagedFields(), exampleManager)
			}
			if _, err := cs.RayV1().RayJobs(ns).ApplyStatus(t.Context(), rayv1ac.RayJob("hello", ns).WithStatus(tc.status),
				metav1.ApplyOptions{FieldManager: "stand-in-operator"}); err != nil {
				t.Fatalf("applying the final status: %v", err)
			}
			code := 0
			if err := cmd.Wait(); err != nil {
				var exit *exec.ExitError
				if !errors.As(err, &exit) {
					t.Fatalf("running the example: %v", err)
				}
				code = exit.ExitCode()
			}
			if code != tc.wantExit {
				t.Errorf("example exited with code %d, want %d; output:\n%s", code, tc.wantExit, out.String())
			}
			want := "applied RayJob " + ns + "/hello (generation 1)\n" + tc.wantOutput
			if out.String() != want {
				t.Errorf("output:\n%s\nwant:\n%s", out.String(), want)
			}
		})
	}
}

// buildExample builds examples/client into the test's temporary directory.
func buildExample(t *testing.T) string {
	t.Helper()
	binary := filepath.Join(t.TempDir(), "client-example")
	build := exec.CommandContext(t.Context(), "go", "build", "-o", binary, "github.com/ray-operator/ray-operator/examples/client")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return binary
}

// waitExampleJob waits for the example's RayJob "hello" in ns to exist.
func waitExampleJob(t *testing.T, cs versioned.Interface, ns string) *rayv1.RayJob {
	t.Helper()
	var job *rayv1.RayJob
	testenv.Eventually(t, "the example's RayJob", waitTimeout, func() (bool, error) {
		var err error
		job, err = cs.RayV1().RayJobs(ns).Get(t.Context(), "hello", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, err
		}
		return err == nil, err
	})
	return job
}
