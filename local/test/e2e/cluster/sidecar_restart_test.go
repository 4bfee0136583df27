package cluster_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// submitterStatus returns the status of the submitter container of the head
// Pod named pod.
func (s *suite) submitterStatus(ctx context.Context, ns, pod string) (corev1.ContainerStatus, error) {
	p := &corev1.Pod{}
	if err := s.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: pod}, p); err != nil {
		return corev1.ContainerStatus{}, err
	}
	for _, cs := range p.Status.ContainerStatuses {
		if cs.Name == "ray-job-submitter" {
			return cs, nil
		}
	}
	return corev1.ContainerStatus{}, fmt.Errorf("pod %s has no ray-job-submitter status", pod)
}

// killHostProcesses sends SIGKILL to every host process whose command line
// contains all of words, and returns their pids.
func killHostProcesses(words ...string) ([]int, error) {
	pids, err := findHostProcesses(words...)
	if err != nil {
		return nil, err
	}
	var killed []int
	for _, pid := range pids {
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			return killed, fmt.Errorf("kill %d: %w", pid, err)
		}
		killed = append(killed, pid)
	}
	return killed, nil
}

// findHostProcesses returns the pids of the host processes (this one
// aside) whose command line contains all of words.
func findHostProcesses(words ...string) ([]int, error) {
	return findHostProcessesOf("", words...)
}

// findHostProcessesOf is findHostProcesses among the processes whose
// argv[0] is program or ends in /program ("" for any).
func findHostProcessesOf(program string, words ...string) ([]int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	var found []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		raw, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue // gone meanwhile
		}
		argv0, _, _ := strings.Cut(string(raw), "\x00")
		if program != "" && argv0 != program && !strings.HasSuffix(argv0, "/"+program) {
			continue
		}
		if containsAll(strings.ReplaceAll(string(raw), "\x00", " "), words) {
			found = append(found, pid)
		}
	}
	return found, nil
}

func containsAll(s string, words []string) bool {
	for _, w := range words {
		if !strings.Contains(s, w) {
			return false
		}
	}
	return true
}

// countSubmissions is a script printing how many Ray jobs the dashboard
// lists with the submission id in argv[1], then how many submitted jobs it
// lists in all.
const countSubmissions = `
import sys
from ray.job_submission import JobSubmissionClient
jobs = JobSubmissionClient("http://127.0.0.1:8265").list_jobs()
print(sum(1 for j in jobs if j.submission_id == sys.argv[1]), sum(1 for j in jobs if j.submission_id))
`

// TestSidecarSubmitterRestart (SidecarSubmitterRestart on, as the suite's
// operator runs): the sidecar submitter of a running job is killed
// (SIGKILL from the host to its `ray job logs --follow`); the kubelet restarts the
// container (restartCount 1, lastState exit 137), the restarted submitter
// finds the job with `ray job status` and follows it without submitting
// again (the dashboard lists exactly one job for the submission id, and the
// second attempt's log has no submission), and the RayJob succeeds.
func TestSidecarSubmitterRestart(t *testing.T) {
	t.Parallel() // mostly waiting: see the package comment (main_test.go)
	ns := shared.namespace(t)
	// The sample's job runs about a minute, for a person to kill the
	// follower by hand; here 12 steps (about 24 s) leave enough time after
	// the kill, which comes at step 1.
	const sample = "ray-job.sidecar-submitter-restart.yaml"
	data, err := os.ReadFile(filepath.Join(shared.Root, "config", "samples", sample))
	if err != nil {
		t.Fatal(err)
	}
	shorter := strings.Replace(string(data), "range(30)", "range(12)", 1)
	if shorter == string(data) {
		t.Fatalf("%s: no range(30) in the entrypoint to shorten", sample)
	}
	job := shared.applyManifest(t, ns, sample, []byte(shorter)).(*rayv1.RayJob)
	started := shared.waitRayJobState(t, ns, job.Name, rayJobTimeout, func(j *rayv1.RayJob) bool {
		return j.Status.RayClusterName != "" && j.Status.JobID != ""
	})
	ctx, cancel := context.WithTimeout(t.Context(), rayJobTimeout)
	defer cancel()
	// The first attempt submitted and follows the job's logs. The RayJob's
	// own status may still say Initializing: the head Pod is not Ready
	// until Ray's readiness checks pass, which can take longer than the
	// job on a loaded machine.
	var head string
	if err := poll(ctx, func() (bool, error) {
		pods, err := shared.rayPods(ctx, ns, started.Status.RayClusterName, string(rayv1.HeadNode))
		if err != nil || len(pods) != 1 {
			return false, fmt.Errorf("head pods %d (%v)", len(pods), err)
		}
		head = pods[0].Name
		logs := shared.logs(ctx, ns, head, "ray-job-submitter", nil)
		return strings.Contains(logs, "step 1\n"), fmt.Errorf("submitter logs %q", logs)
	}); err != nil {
		t.Fatalf("the submitter does not follow the job: %v", err)
	}
	first := shared.logs(ctx, ns, head, "ray-job-submitter", nil)
	// From the host, as a runtime stops a container: inside the container
	// the log follower may be its PID 1 (bash execs the script's last
	// command), which ignores signals sent from within its namespace.
	follower := []string{"job logs", "--follow " + started.Status.JobID}
	var killed []int
	if err := poll(ctx, func() (bool, error) {
		var err error
		killed, err = killHostProcesses(follower...)
		return len(killed) > 0, fmt.Errorf("no process with %q (%v)", follower, err)
	}); err != nil {
		t.Fatalf("killing the submitter's ray job logs: %v", err)
	}
	t.Logf("SIGKILL to the submitter's log follower, host pids %v", killed)
	killedAt := time.Now()

	var st corev1.ContainerStatus
	if err := poll(ctx, func() (bool, error) {
		var err error
		st, err = shared.submitterStatus(ctx, ns, head)
		return err == nil && st.RestartCount >= 1 && st.State.Running != nil, fmt.Errorf("status %+v (%v)", st, err)
	}); err != nil {
		t.Fatalf("the submitter was not restarted: %v", err)
	}
	t.Logf("submitter restarted %v after the kill", time.Since(killedAt).Round(time.Millisecond))

	done := shared.waitRayJob(t, ns, job.Name, rayJobTimeout)
	requireSucceeded(t, done, started.Status.RayClusterName)
	if done.Status.JobID != started.Status.JobID {
		t.Errorf("job id %q, was %q", done.Status.JobID, started.Status.JobID)
	}
	st, err = shared.submitterStatus(t.Context(), ns, head)
	if err != nil {
		t.Fatal(err)
	}
	last := st.LastTerminationState.Terminated
	if st.RestartCount != 1 || last == nil || last.ExitCode != 137 || st.State.Terminated == nil || st.State.Terminated.ExitCode != 0 {
		t.Errorf("submitter status %+v; want restartCount 1, lastState exit 137, exited 0", st)
	}
	second := shared.logs(t.Context(), ns, head, "ray-job-submitter", nil)
	if !strings.Contains(first, "submitted successfully") || strings.Contains(second, "submitted successfully") || !strings.Contains(second, "all steps done") {
		t.Errorf("first attempt's log:\n%s\nsecond attempt's log (want no submission, the job's end):\n%s", first, second)
	}
	out, err := shared.kubectl(t.Context(), "exec", "-n", ns, head, "-c", "ray-head", "--", "python", "-c", countSubmissions, done.Status.JobID)
	if err != nil {
		t.Fatalf("listing the dashboard's jobs: %v\n%s", err, out)
	}
	if strings.TrimSpace(out) != "1 1" {
		t.Errorf("dashboard jobs with submission id %s, submitted jobs in all: %q, want \"1 1\"", done.Status.JobID, out)
	}
}
