package cluster_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// burnPod holds 64 MiB and keeps about half a core busy.
const burnPod = `
apiVersion: v1
kind: Pod
metadata:
  name: burn
spec:
  terminationGracePeriodSeconds: 1
  containers:
    - name: burn
      image: rayproject/ray:2.52.0
      command:
        - python
        - -c
        - |
          import time
          held = bytearray(64 << 20)
          for i in range(0, len(held), 4096):
              held[i] = 1
          while True:
              t = time.time()
              while time.time() - t < 0.02:
                  pass
              time.sleep(0.02)
`

// metricsTimeout bounds the wait for the pod's first PodMetrics: the pod's
// start, then two scrapes of metrics-server (10 s apart) and the
// APIService becoming available.
const metricsTimeout = 2 * time.Minute

// TestResourceMetrics: a running pod's CPU and memory reach metrics.k8s.io
// through metrics-server and the aggregation layer, close to what its
// cgroup files said at the time of the scrape; the node's /stats/summary
// (through the API server's node proxy) agrees with the cgroup files too,
// and kubectl top shows the pod and the node.
func TestResourceMetrics(t *testing.T) {
	ns := shared.namespace(t)
	shared.applyManifest(t, ns, "burnPod", []byte(burnPod))
	ctx, cancel := context.WithTimeout(t.Context(), metricsTimeout)
	defer cancel()
	var pod *corev1.Pod
	err := poll(ctx, func() (bool, error) {
		var err error
		pod, err = shared.Clientset.CoreV1().Pods(ns).Get(ctx, "burn", metav1.GetOptions{})
		return err == nil && runningAndReady(pod), err
	})
	if err != nil {
		t.Fatalf("pod burn is not running: %v", err)
	}
	cg, err := findCgroup(strings.TrimPrefix(pod.Status.ContainerStatuses[0].ContainerID, "runc://"))
	if err != nil {
		t.Fatal(err)
	}
	rec := recordCgroup(ctx, t, cg)
	shared.checkSummary(ctx, t, ns, cg)
	running := time.Now()
	m := shared.waitPodMetrics(ctx, t, ns, "burn", rec.covers)
	t.Logf("PodMetrics %v after the pod was running", time.Since(running).Round(time.Second))
	rec.check(t, m)
	for _, args := range [][]string{{"top", "pods", "-n", ns}, {"top", "nodes"}} {
		want := map[string]string{"pods": "burn", "nodes": shared.Cluster.NodeName}[args[1]]
		var out string
		err := poll(ctx, func() (bool, error) {
			var err error
			out, err = shared.kubectl(ctx, args...)
			return err == nil && strings.Contains(out, want), err
		})
		if err != nil {
			t.Errorf("kubectl %s never showed %s: %v\n%s", strings.Join(args, " "), want, err, out)
		}
		t.Logf("kubectl %s:\n%s", strings.Join(args, " "), out)
	}
}

// podMetrics is what metrics.k8s.io/v1beta1 serves for a pod.
type podMetrics struct {
	Timestamp  metav1.Time     `json:"timestamp"`
	Window     metav1.Duration `json:"window"`
	Containers []struct {
		Name  string              `json:"name"`
		Usage corev1.ResourceList `json:"usage"`
	} `json:"containers"`
}

// waitPodMetrics polls the pod's PodMetrics through the API server until
// metrics-server has some that ok accepts.
func (s *suite) waitPodMetrics(ctx context.Context, t *testing.T, ns, name string, ok func(*podMetrics) bool) *podMetrics {
	t.Helper()
	var m podMetrics
	path := fmt.Sprintf("/apis/metrics.k8s.io/v1beta1/namespaces/%s/pods/%s", ns, name)
	err := poll(ctx, func() (bool, error) {
		data, err := s.Clientset.CoreV1().RESTClient().Get().AbsPath(path).DoRaw(ctx)
		if err != nil {
			return false, err
		}
		return json.Unmarshal(data, &m) == nil && len(m.Containers) == 1 && ok(&m), fmt.Errorf("PodMetrics: %s", data)
	})
	if err != nil {
		t.Fatalf("no PodMetrics for %s/%s: %v", ns, name, err)
	}
	return &m
}

// checkSummary reads the node's /stats/summary through the API server's
// node proxy and compares the pod's container with its cgroup files.
func (s *suite) checkSummary(ctx context.Context, t *testing.T, ns string, cg string) {
	t.Helper()
	before, err := readCgroup(cg)
	if err != nil {
		t.Fatal(err)
	}
	data, err := s.Clientset.CoreV1().RESTClient().Get().AbsPath("/api/v1/nodes", s.Cluster.NodeName, "proxy/stats/summary").DoRaw(ctx)
	if err != nil {
		t.Fatalf("GET /stats/summary through the node proxy: %v", err)
	}
	after, err := readCgroup(cg)
	if err != nil {
		t.Fatal(err)
	}
	var summary statsv1alpha1.Summary
	if err := json.Unmarshal(data, &summary); err != nil {
		t.Fatal(err)
	}
	if summary.Node.NodeName != s.Cluster.NodeName || summary.Node.Memory == nil || summary.Node.CPU == nil {
		t.Errorf("summary node = %+v", summary.Node)
	}
	for _, p := range summary.Pods {
		if p.PodRef.Namespace != ns || len(p.Containers) != 1 {
			continue
		}
		c := p.Containers[0]
		cpu, ws := time.Duration(*c.CPU.UsageCoreNanoSeconds), *c.Memory.WorkingSetBytes //nolint:gosec // CPU time fits
		if cpu < before.cpu || cpu > after.cpu {
			t.Errorf("summary CPU %v, not between the cgroup's %v and %v", cpu, before.cpu, after.cpu)
		}
		if !near(float64(ws), float64(after.workingSet), 0.1, 4<<20) {
			t.Errorf("summary working set %d, cgroup's %d", ws, after.workingSet)
		}
		t.Logf("summary: CPU %v (cgroup %v..%v), working set %d (cgroup %d)", cpu, before.cpu, after.cpu, ws, after.workingSet)
		return
	}
	t.Errorf("summary has no pod in %s: %s", ns, data)
}

// cgroupReading is one reading of a container's cgroup files.
type cgroupReading struct {
	at         time.Time
	cpu        time.Duration // cpuacct.usage
	workingSet uint64        // memory.usage_in_bytes less total_inactive_file
}

// findCgroup finds the cgroup v1 directory (relative to a hierarchy) of a
// runc container of the local node.
func findCgroup(id string) (string, error) {
	matches, err := filepath.Glob(filepath.Join("/sys/fs/cgroup/memory/rayop-*", "*", id)) // the host, the pod, the container
	if err != nil || len(matches) != 1 {
		return "", fmt.Errorf("cgroup of container %s: %v (%v)", id, matches, err)
	}
	return strings.TrimPrefix(matches[0], "/sys/fs/cgroup/memory/"), nil
}

func readCgroup(rel string) (cgroupReading, error) {
	r := cgroupReading{at: time.Now()}
	ns, err := readNumber(filepath.Join("/sys/fs/cgroup/cpuacct", rel, "cpuacct.usage"))
	if err != nil {
		return r, err
	}
	usage, err := readNumber(filepath.Join("/sys/fs/cgroup/memory", rel, "memory.usage_in_bytes"))
	if err != nil {
		return r, err
	}
	stat, err := os.ReadFile(filepath.Join("/sys/fs/cgroup/memory", rel, "memory.stat"))
	if err != nil {
		return r, err
	}
	var inactive uint64
	for line := range strings.Lines(string(stat)) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "total_inactive_file "); ok {
			inactive, err = strconv.ParseUint(v, 10, 64)
		}
	}
	r.cpu, r.workingSet = time.Duration(ns), usage-min(inactive, usage) //nolint:gosec // CPU time fits
	return r, err
}

func readNumber(path string) (uint64, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return strconv.ParseUint(strings.TrimSpace(string(data)), 10, 64)
}

// cgroupRecord reads a cgroup every 200 ms until ctx ends.
type cgroupRecord struct {
	mu       sync.Mutex
	readings []cgroupReading
}

func recordCgroup(ctx context.Context, t *testing.T, rel string) *cgroupRecord {
	rec := &cgroupRecord{}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done })
	go func() {
		defer close(done)
		ticker := time.NewTicker(200 * time.Millisecond)
		defer ticker.Stop()
		for {
			if r, err := readCgroup(rel); err == nil {
				rec.mu.Lock()
				rec.readings = append(rec.readings, r)
				rec.mu.Unlock()
			}
			select {
			case <-ctx.Done():
				return
			case <-ticker.C:
			}
		}
	}()
	return rec
}

// covers reports whether the readings began before m's window did: the
// first PodMetrics may have a window that starts with the container, before
// the test found its cgroup and began reading; metrics-server's next scrape
// gives a window inside the readings.
func (rec *cgroupRecord) covers(m *podMetrics) bool {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return len(rec.readings) > 0 && !rec.readings[0].at.After(m.Timestamp.Add(-m.Window.Duration).Add(time.Second))
}

// nearest is the reading closest to at.
func (rec *cgroupRecord) nearest(at time.Time) cgroupReading {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	best := rec.readings[0]
	for _, r := range rec.readings {
		if r.at.Sub(at).Abs() < best.at.Sub(at).Abs() {
			best = r
		}
	}
	return best
}

// check compares PodMetrics with the cgroup's readings over its window:
// CPU within 25% (or 50 millicores), memory within 10% (or 4 MiB).
func (rec *cgroupRecord) check(t *testing.T, m *podMetrics) {
	t.Helper()
	end, start := rec.nearest(m.Timestamp.Time), rec.nearest(m.Timestamp.Add(-m.Window.Duration))
	if end.at.Sub(m.Timestamp.Time).Abs() > time.Second || start.at.Sub(m.Timestamp.Add(-m.Window.Duration)).Abs() > time.Second {
		t.Fatalf("no cgroup readings near the metrics window %v..%v (window %v)", m.Timestamp.Add(-m.Window.Duration), m.Timestamp, m.Window.Duration)
	}
	wantCores := float64(end.cpu-start.cpu) / float64(end.at.Sub(start.at))
	usage := m.Containers[0].Usage
	gotCores := float64(usage.Cpu().MilliValue()) / 1000
	if !near(gotCores, wantCores, 0.25, 0.05) {
		t.Errorf("PodMetrics CPU %.3f cores, cgroup %.3f over the window", gotCores, wantCores)
	}
	gotMem := usage.Memory().Value()
	if !near(float64(gotMem), float64(end.workingSet), 0.1, 4<<20) {
		t.Errorf("PodMetrics memory %d, cgroup working set %d", gotMem, end.workingSet)
	}
	if gotMem < 64<<20 {
		t.Errorf("PodMetrics memory %s, below the 64 MiB the pod holds", resource.NewQuantity(gotMem, resource.BinarySI))
	}
	t.Logf("PodMetrics: CPU %.3f cores (cgroup %.3f), memory %d (cgroup %d), window %v", gotCores, wantCores, gotMem, end.workingSet, m.Window.Duration)
}

// near: got is within frac of want, or within abs.
func near(got, want, frac, abs float64) bool {
	d := math.Abs(got - want)
	return d <= abs || d <= frac*want
}
