package node_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
)

// The limits the test node runs with (startCluster): small, so that the
// pods below reach them in a second or two.
const (
	testPodPids        = 64
	testLogMaxSize     = 64 << 10
	testLogMaxFiles    = 2
	testHousekeepEvery = 200 * time.Millisecond
)

// forkScript forks children that sleep until a fork fails (at most 200,
// so that a node without a pids limit is not hurt), says how many it made
// and why it stopped, and keeps them.
const forkScript = `exec python3 -c '
import os, time
made = 0
for _ in range(200):
    try:
        pid = os.fork()
    except OSError as e:
        print("fork failed after", made, "children:", e.strerror, flush=True)
        break
    if pid == 0:
        time.sleep(300)
        os._exit(0)
    made += 1
else:
    print("forked", made, "children", flush=True)
time.sleep(300)
'`

// testForkBomb: a pod that forks without end stops at the node's pids
// limit with the kernel's EAGAIN ("Resource temporarily unavailable", all a
// kubelet gives too), while another pod runs to completion beside it.
func testForkBomb(t *testing.T, c *cluster) {
	pod := sleepPod("forker", forkScript)
	pod.Spec.TerminationGracePeriodSeconds = ptr.To[int64](1) // python as PID 1 ignores SIGTERM
	createAndWait(t, c, pod, "Running", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })
	var logs string
	err := wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		logs = kubeletLogs(t, c, "forker", "main")
		return strings.Contains(logs, "fork"), nil
	})
	if err != nil {
		t.Fatalf("the forker never said how far it got: %v", err)
	}
	m := regexp.MustCompile(`fork failed after (\d+) children: Resource temporarily unavailable`).FindStringSubmatch(logs)
	if m == nil {
		t.Fatalf("forker log %q; want its forks refused at the pod's pids limit", logs)
	}
	if made, _ := strconv.Atoi(m[1]); made >= testPodPids {
		t.Errorf("the forker made %d children under a pids limit of %d", made, testPodPids)
	}
	neighbour := sleepPod("forker-neighbour", "echo still here")
	neighbour.Spec.RestartPolicy = corev1.RestartPolicyNever
	runToCompletion(t, c, neighbour)
	deleteAndWait(t, c, "forker", "forker-neighbour")
}

// chattyScript writes numbered 1 KiB lines to stdout without end, about
// 2 MB/s.
const chattyScript = `exec python3 -c '
import sys, time
pad = "x" * 1000
i = 0
while True:
    for _ in range(20):
        sys.stdout.write("%09d %s\n" % (i, pad))
        i += 1
    sys.stdout.flush()
    time.sleep(0.01)
'`

// testEndlessStdout: a pod that writes to stdout without end has its log
// rotated at the node's maximum size, keeping the node's number of files,
// so that what it wrote outgrows what the node keeps; the kubelet API
// serves the tail of the current file.
func testEndlessStdout(t *testing.T, c *cluster) {
	chatty := sleepPod("chatty", chattyScript)
	chatty.Spec.TerminationGracePeriodSeconds = ptr.To[int64](1)
	pod := createAndWait(t, c, chatty, "Running", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })
	dir := filepath.Join(c.stateDir, "pods", string(pod.UID), "logs", "main")
	var kept int64
	var files []string
	var written int
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		kept, files = dirSize(t, dir)
		last := strings.Fields(kubeletLogsQuery(t, c, "chatty", "main", "tailLines=1"))
		if len(last) == 0 {
			return false, nil
		}
		n, err := strconv.Atoi(last[0])
		if err != nil {
			return false, fmt.Errorf("tail line %q: %w", last, err)
		}
		written = (n + 1) * 1011
		return written > 4*int(kept) && len(files) <= testLogMaxFiles, nil
	})
	if err != nil {
		t.Errorf("the pod wrote %d bytes, the node keeps %d in %v: want rotated files, at most %d, holding under a quarter of it (%v)", written, kept, files, testLogMaxFiles, err)
	}
	deleteAndWait(t, c, "chatty")
}

// dirSize is the size of the files in dir and their names.
func dirSize(t *testing.T, dir string) (int64, []string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	var names []string
	for _, e := range entries {
		if info, err := e.Info(); err == nil {
			total += info.Size()
			names = append(names, e.Name())
		}
	}
	return total, names
}

// testEmptyDirFilled: a pod that fills its emptyDir past the sizeLimit is
// evicted as a kubelet evicts it: Failed, reason Evicted, the kubelet's
// message and a Warning event.
func testEmptyDirFilled(t *testing.T, c *cluster) {
	pod := sleepPod("filler", "dd if=/dev/zero of=/scratch/fill bs=64k count=64 && exec sleep 1000")
	pod.Spec.Volumes = []corev1.Volume{{Name: "scratch", VolumeSource: corev1.VolumeSource{
		EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: ptr.To(resource.MustParse("1Mi"))}}}}
	pod.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "scratch", MountPath: "/scratch"}}
	const message = `Usage of EmptyDir volume "scratch" exceeds the limit "1Mi". `
	got := createAndWait(t, c, pod, "Evicted", func(p *corev1.Pod) bool {
		return p.Status.Phase == corev1.PodFailed && len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].State.Terminated != nil
	})
	if got.Status.Reason != "Evicted" || got.Status.Message != message {
		t.Errorf("reason, message = %q, %q; want Evicted, %q", got.Status.Reason, got.Status.Message, message)
	}
	if st := got.Status.ContainerStatuses[0]; st.RestartCount != 0 {
		t.Errorf("container %+v restarted, want killed for good", st)
	}
	waitEvent(t, c, "filler", "Evicted", message)
	deleteAndWait(t, c, "filler")
}
