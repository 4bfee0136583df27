package kubeletapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/ray-operator/ray-operator/local/internal/sandbox"
)

// fakeUsage serves fixed figures.
type fakeUsage struct {
	node    sandbox.MachineUsage
	nodeErr error
	pods    []PodUsage
}

func (f fakeUsage) NodeUsage() (sandbox.MachineUsage, error) { return f.node, f.nodeErr }
func (f fakeUsage) PodUsage() []PodUsage                     { return f.pods }

var (
	readAt  = time.UnixMilli(1700000000123)
	started = time.Unix(1699999000, 500000000)
)

// twoContainerPod is ns/p with containers a and b, read 2 s and 3 s after
// the node.
func twoContainerPod() []PodUsage {
	return []PodUsage{{
		Namespace: "ns", Name: "p", UID: "uid-1", StartTime: started,
		Containers: []ContainerUsage{
			{Name: "a", StartTime: started, Usage: sandbox.Usage{RSSBytes: 1000, MemoryBytes: 3000, WorkingSetBytes: 2000, CPU: 1500 * time.Millisecond}, At: readAt.Add(2 * time.Second)},
			{Name: "b", StartTime: started, Usage: sandbox.Usage{RSSBytes: 10, MemoryBytes: 30, WorkingSetBytes: 20, CPU: 250 * time.Millisecond}, At: readAt.Add(3 * time.Second)},
		},
	}}
}

func TestRenderResourceMetrics(t *testing.T) {
	const want = `# HELP container_cpu_usage_seconds_total [STABLE] Cumulative CPU time the container consumed, in core-seconds.
# TYPE container_cpu_usage_seconds_total counter
container_cpu_usage_seconds_total{container="a",namespace="ns",pod="p"} 1.5 1700000002123
container_cpu_usage_seconds_total{container="b",namespace="ns",pod="p"} 0.25 1700000003123
# HELP container_memory_working_set_bytes [STABLE] Current working set of the container, in bytes.
# TYPE container_memory_working_set_bytes gauge
container_memory_working_set_bytes{container="a",namespace="ns",pod="p"} 2000 1700000002123
container_memory_working_set_bytes{container="b",namespace="ns",pod="p"} 20 1700000003123
# HELP container_start_time_seconds [STABLE] Start time of the container since the Unix epoch, in seconds.
# TYPE container_start_time_seconds gauge
container_start_time_seconds{container="a",namespace="ns",pod="p"} 1699999000.5 1700000002123
container_start_time_seconds{container="b",namespace="ns",pod="p"} 1699999000.5 1700000003123
# HELP node_cpu_usage_seconds_total [STABLE] Cumulative CPU time the node consumed, in core-seconds.
# TYPE node_cpu_usage_seconds_total counter
node_cpu_usage_seconds_total 42 1700000000123
# HELP node_memory_working_set_bytes [STABLE] Current working set of the node, in bytes.
# TYPE node_memory_working_set_bytes gauge
node_memory_working_set_bytes 1048576 1700000000123
# HELP pod_cpu_usage_seconds_total [STABLE] Cumulative CPU time the pod consumed, in core-seconds.
# TYPE pod_cpu_usage_seconds_total counter
pod_cpu_usage_seconds_total{namespace="ns",pod="p"} 1.75 1700000003123
# HELP pod_memory_working_set_bytes [STABLE] Current working set of the pod, in bytes.
# TYPE pod_memory_working_set_bytes gauge
pod_memory_working_set_bytes{namespace="ns",pod="p"} 2020 1700000003123
# HELP scrape_error [STABLE] 1 if there was an error while getting the node's figures, 0 otherwise.
# TYPE scrape_error gauge
scrape_error 0
`
	snap := usageSnapshot{at: readAt, node: sandbox.MachineUsage{Usage: sandbox.Usage{WorkingSetBytes: 1 << 20, CPU: 42 * time.Second}}, pods: twoContainerPod()}
	got := renderResourceMetrics(snap)
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("renderResourceMetrics() (-want +got):\n%s", diff)
	}
	parser := expfmt.NewTextParser(model.LegacyValidation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(got))
	if err != nil {
		t.Fatalf("the Prometheus text parser refuses the output: %v", err)
	}
	if n := len(families); n != 8 {
		t.Errorf("parsed %d metric families, want 8", n)
	}
}

// TestRenderResourceMetricsNodeError: without the node's figures the node
// samples are left out and scrape_error says so; the pods remain.
func TestRenderResourceMetricsNodeError(t *testing.T) {
	snap := usageSnapshot{at: readAt, nodeErr: errors.New("no /proc"), pods: twoContainerPod()}
	parser := expfmt.NewTextParser(model.LegacyValidation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(renderResourceMetrics(snap)))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := families["node_cpu_usage_seconds_total"]; ok {
		t.Error("node_cpu_usage_seconds_total is there without node figures")
	}
	if got := families["scrape_error"].GetMetric()[0].GetGauge().GetValue(); got != 1 {
		t.Errorf("scrape_error = %v, want 1", got)
	}
	if got := len(families["pod_cpu_usage_seconds_total"].GetMetric()); got != 1 {
		t.Errorf("%d pod samples, want 1", got)
	}
}

// TestServeSummary serves /stats/summary through the server's routes and
// checks the JSON a stats client reads.
func TestServeSummary(t *testing.T) {
	s := &Server{
		NodeName: "n1",
		Usage:    fakeUsage{node: sandbox.MachineUsage{Usage: sandbox.Usage{MemoryBytes: 5000, WorkingSetBytes: 4000, CPU: 3 * time.Second}, BootTime: started}, pods: twoContainerPod()},
		Clock:    clocktesting.NewFakeClock(readAt),
	}
	rec := httptest.NewRecorder()
	s.routes().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/stats/summary", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /stats/summary = %d %s", rec.Code, rec.Body)
	}
	var got map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	var want map[string]any
	if err := json.Unmarshal([]byte(wantSummary), &want); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("GET /stats/summary (-want +got):\n%s", diff)
	}
}

const wantSummary = `{
  "node": {
    "nodeName": "n1", "startTime": "2023-11-14T21:56:40Z",
    "cpu": {"time": "2023-11-14T22:13:20Z", "usageCoreNanoSeconds": 3000000000},
    "memory": {"time": "2023-11-14T22:13:20Z", "usageBytes": 5000, "workingSetBytes": 4000}
  },
  "pods": [{
    "podRef": {"name": "p", "namespace": "ns", "uid": "uid-1"},
    "startTime": "2023-11-14T21:56:40Z",
    "containers": [
      {"name": "a", "startTime": "2023-11-14T21:56:40Z",
       "cpu": {"time": "2023-11-14T22:13:22Z", "usageCoreNanoSeconds": 1500000000},
       "memory": {"time": "2023-11-14T22:13:22Z", "usageBytes": 3000, "workingSetBytes": 2000, "rssBytes": 1000}},
      {"name": "b", "startTime": "2023-11-14T21:56:40Z",
       "cpu": {"time": "2023-11-14T22:13:23Z", "usageCoreNanoSeconds": 250000000},
       "memory": {"time": "2023-11-14T22:13:23Z", "usageBytes": 30, "workingSetBytes": 20, "rssBytes": 10}}
    ],
    "cpu": {"time": "2023-11-14T22:13:23Z", "usageCoreNanoSeconds": 1750000000},
    "memory": {"time": "2023-11-14T22:13:23Z", "usageBytes": 3030, "workingSetBytes": 2020, "rssBytes": 1010}
  }]
}`
