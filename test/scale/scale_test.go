package main

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"google.golang.org/protobuf/proto"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/dashboard"
)

func TestStatCPUSeconds(t *testing.T) {
	// pid (comm with spaces) state ppid ... utime=250 stime=50 (fields 14, 15)
	stat := []byte("42 (ray operator) S 1 42 42 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 12 0 100 0 0")
	if got := statCPUSeconds(stat); got != 3 {
		t.Errorf("statCPUSeconds = %v, want 3", got)
	}
	if got := statCPUSeconds([]byte("garbage")); got != 0 {
		t.Errorf("statCPUSeconds(garbage) = %v, want 0", got)
	}
}

func TestHistogramQuantile(t *testing.T) {
	h := &dto.Histogram{SampleCount: proto.Uint64(100), Bucket: []*dto.Bucket{
		{UpperBound: proto.Float64(0.1), CumulativeCount: proto.Uint64(50)},
		{UpperBound: proto.Float64(1), CumulativeCount: proto.Uint64(90)},
		{UpperBound: proto.Float64(10), CumulativeCount: proto.Uint64(100)},
	}}
	for q, want := range map[float64]float64{0.5: 0.1, 0.25: 0.05, 0.7: 0.55, 0.95: 5.5} {
		if got := histogramQuantile(q, h); math.Abs(got-want) > 1e-9 {
			t.Errorf("quantile %v = %v, want %v", q, got, want)
		}
	}
	if got := histogramQuantile(0.5, &dto.Histogram{}); got != 0 {
		t.Errorf("empty histogram quantile = %v", got)
	}
}

// TestDashboardClasses: the classes come out in about the fractions asked
// for, and the same cluster always gets the same class.
func TestDashboardClasses(t *testing.T) {
	d := &simDashboards{slow: 0.05, timeout: 0.02}
	counts := map[dashClass]int{}
	timeouts := 0
	for i := range 10000 {
		name := fmt.Sprintf("j%04d-abcde", i)
		counts[d.classOf(name)]++
		if d.timesOut(name, 1) {
			timeouts++
		}
	}
	if counts[classSlow] < 350 || counts[classSlow] > 650 || timeouts < 100 || timeouts > 300 {
		t.Errorf("classes of 10,000 clusters: %v, first requests timing out: %d; want about 500 slow and 200", counts, timeouts)
	}
	first := d.classOf("cluster-x")
	for range 10 {
		if d.classOf("cluster-x") != first {
			t.Fatal("classOf is not deterministic")
		}
	}
}

// TestServeNetwork: a request reaches the dashboard of the cluster whose
// head Pod has the address it was made to, and a request to an address
// that is no head Pod's is refused and counted.
func TestServeNetwork(t *testing.T) {
	d := newSimDashboards(&options{instant: true})
	heads := map[string]string{"127.0.0.1": "c1"}
	addr, err := d.serveNetwork("127.0.0.1:0", func(ip string) (string, bool) {
		c, ok := heads[ip]
		return c, ok
	})
	if err != nil {
		t.Fatal(err)
	}
	defer d.close()
	c, err := dashboard.NewHTTPClient("http://"+addr, "")
	if err != nil {
		t.Fatal(err)
	}
	id, err := c.SubmitJob(t.Context(), &dashboard.JobSubmitRequest{Entrypoint: "python job.py", SubmissionID: "j1"})
	if err != nil || id != "j1" {
		t.Fatalf("SubmitJob = %q, %v; want j1", id, err)
	}
	if info, err := c.GetJobInfo(t.Context(), "j1"); err != nil || info.JobStatus != rayv1.JobStatusPending {
		t.Fatalf("GetJobInfo = %+v, %v; want the job PENDING", info, err)
	}
	delete(heads, "127.0.0.1")
	if _, err := c.GetJobInfo(t.Context(), "j1"); err == nil {
		t.Fatal("GetJobInfo through an address no head Pod has succeeded")
	}
	if got := d.extra(1); got["dashboardCallsPerJob"] != 2 || got["dashboardUnknownAddress"] != 1 || d.calls["c1"] != 2 {
		t.Errorf("figures %v, calls by cluster %v; want 2 calls to c1 and 1 to an unknown address", got, d.calls)
	}
}

func TestOptions(t *testing.T) {
	o := options{sizes: "10, 20", kinds: "raycluster,rayjob,floor", operatorFlags: "--qps=5  --burst=10", operatorEnv: "GOGC=75 GODEBUG=", nodes: 1, namespaces: 1}
	if err := o.complete(); err != nil {
		t.Fatal(err)
	}
	if len(o.sizeList) != 2 || o.sizeList[1] != 20 || len(o.kindList) != 3 || len(o.opArgs) != 2 || o.label != "--qps=5 --burst=10" {
		t.Errorf("options %+v", o)
	}
	if got := o.processEnv(kindRayCluster); !slices.Equal(got, []string{"GOGC=75", "GODEBUG="}) || o.processEnv(kindRayJob) != nil {
		t.Errorf("operator process environment %v, in-process %v", got, o.processEnv(kindRayJob))
	}
	for _, bad := range []options{
		{sizes: "0", kinds: "raycluster", nodes: 1, namespaces: 1},
		{sizes: "1", kinds: "raypod", nodes: 1, namespaces: 1},
		{sizes: "1", kinds: "raycluster", nodes: 1, namespaces: 0},
		{sizes: "1", kinds: "raycluster", nodes: 1, namespaces: 1, operatorEnv: "GOGC"},
		{sizes: "1", kinds: "raycluster", nodes: 1, namespaces: 1, operatorEnv: "=75"},
		{sizes: "1", kinds: "raycluster", nodes: 1, namespaces: 1, pprofDir: "p", pprofCPUSeconds: 30, userAgent: "kuberay-operator"}, // no pprof endpoint
		{sizes: "1", kinds: "raycluster", nodes: 1, namespaces: 1, pprofTraceSeconds: 10},                                             // a trace needs -pprof-dir
	} {
		if err := bad.complete(); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

// TestDoneSet: an object counts once however often it is seen done, and
// stops counting when it is seen not done (or deleted) again.
func TestDoneSet(t *testing.T) {
	var d doneSet
	d.set("a", true)
	d.set("a", true)
	d.set("b", false)
	d.set("c", true)
	if d.count != 2 {
		t.Fatalf("count %d, want 2", d.count)
	}
	d.set("a", false)
	if d.count != 1 {
		t.Fatalf("count %d after a was seen not done, want 1", d.count)
	}
}

func TestParseLoadAvg(t *testing.T) {
	got, err := parseLoadAvg([]byte("1.50 0.75 0.25 3/400 12345\n"))
	if err != nil || len(got) != 3 || got[0] != 1.5 || got[1] != 0.75 || got[2] != 0.25 {
		t.Errorf("parseLoadAvg = %v, %v", got, err)
	}
	if _, err := parseLoadAvg([]byte("1.5")); err == nil {
		t.Error("a short line was accepted")
	}
}

func TestStatusPeakRSSMiB(t *testing.T) {
	status := []byte("Name:\tetcd\nVmPeak:\t  999 kB\nVmHWM:\t    20480 kB\nVmRSS:\t 1024 kB\n")
	if got, err := statusPeakRSSMiB(status); err != nil || got != 20 {
		t.Errorf("statusPeakRSSMiB = %v, %v; want 20", got, err)
	}
	if _, err := statusPeakRSSMiB([]byte("Name:\tx\n")); err == nil {
		t.Error("a status without VmHWM was accepted")
	}
}

// TestReadySeries: a change is kept when at least seriesStep after the
// point before the last; a burst within it collapses into its latest count;
// repeats add nothing.
func TestReadySeries(t *testing.T) {
	var s readySeries
	for _, p := range []seriesPoint{{0, 0}, {0.1, 1}, {0.2, 1}, {0.3, 2}, {0.4, 3}, {0.7, 4}, {2, 5}} {
		s.add(p)
	}
	want := []seriesPoint{{0, 0}, {0.4, 3}, {0.7, 4}, {2, 5}}
	if fmt.Sprint(s.points) != fmt.Sprint(want) {
		t.Errorf("points %v, want %v", s.points, want)
	}
	path := t.TempDir() + "/ready.tsv"
	if err := s.write(path); err != nil {
		t.Fatal(err)
	}
	back, err := readSeries(path)
	if err != nil || fmt.Sprint(back) != fmt.Sprint(want) {
		t.Errorf("readSeries = %v, %v; want %v", back, err, want)
	}
	var none *readySeries
	none.record(1) // a nil series records nothing, and does not panic
}

// TestClusterPods: a cluster counts once all its Pods are Running and
// Ready, and stops counting when one is not (or is deleted).
func TestClusterPods(t *testing.T) {
	c := &clusterPods{perCluster: 2}
	c.observe(benchPod("a-head", "a", true), false)
	c.observe(benchPod("b-head", "b", true), false)
	if c.count() != 0 {
		t.Fatalf("count %d with one Pod of two ready per cluster", c.count())
	}
	c.observe(benchPod("a-w", "a", true), false)
	c.observe(benchPod("a-w", "a", true), false)
	if c.count() != 1 {
		t.Fatalf("count %d, want 1", c.count())
	}
	c.observe(benchPod("a-head", "a", true), true)
	c.observe(benchPod("b-w", "b", false), false)
	if c.count() != 0 {
		t.Fatalf("count %d after a's head was deleted and b's worker is not ready, want 0", c.count())
	}
	other := benchPod("coredns-1", "", true)
	delete(other.Labels, rayv1.LabelCluster)
	c.observe(other, false)
	c.observe(benchPod("coredns-2", "", true), false)
	if c.count() != 0 {
		t.Fatalf("count %d after two Pods of no cluster, want 0", c.count())
	}
}

// TestNamespaceSpread: -namespaces spreads the i-th object round-robin and
// watches all namespaces; 1 keeps everything in bench.
func TestNamespaceSpread(t *testing.T) {
	one := &options{namespaces: 1}
	if one.namespaceOf(7) != "bench" || one.listNamespace() != "bench" || !slices.Equal(one.namespaceNames(), []string{"bench"}) {
		t.Errorf("one namespace: %q, %q, %v", one.namespaceOf(7), one.listNamespace(), one.namespaceNames())
	}
	three := &options{namespaces: 3}
	var got []string
	for i := range 5 {
		got = append(got, three.namespaceOf(i))
	}
	if want := []string{"bench-000", "bench-001", "bench-002", "bench-000", "bench-001"}; !slices.Equal(got, want) {
		t.Errorf("namespaceOf 0..4 = %v, want %v", got, want)
	}
	if names := three.namespaceNames(); !slices.Equal(names, got[:3]) || three.listNamespace() != "" {
		t.Errorf("names %v, listed in %q", names, three.listNamespace())
	}
}

func benchPod(name, cluster string, ready bool) *corev1.Pod {
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{rayv1.LabelCluster: cluster}},
		Status:     corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: status}}},
	}
}

// TestFloorObjects: the floor's objects are the operator's builders'
// output for the bench cluster: a head Service, a head Pod and the workers,
// labelled for the cluster, with no owner.
func TestFloorObjects(t *testing.T) {
	objs, err := floorObjects(benchCluster("c0001", namespace, 3))
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, obj := range objs {
		if obj.GetLabels()[rayv1.LabelCluster] != "c0001" || len(obj.GetOwnerReferences()) != 0 {
			t.Errorf("%T %s: labels %v, owners %v", obj, obj.GetName()+obj.GetGenerateName(), obj.GetLabels(), obj.GetOwnerReferences())
		}
		switch o := obj.(type) {
		case *corev1.Service:
			kinds = append(kinds, "service")
		case *corev1.Pod:
			kinds = append(kinds, o.Labels[rayv1.LabelNodeType])
		}
	}
	if want := "[service head worker worker worker]"; fmt.Sprint(kinds) != want {
		t.Errorf("objects %v, want %s", kinds, want)
	}
}

func TestReconcileTimes(t *testing.T) {
	bucket := func(le float64, n uint64) *dto.Bucket {
		return &dto.Bucket{UpperBound: proto.Float64(le), CumulativeCount: proto.Uint64(n)}
	}
	mf := &dto.MetricFamily{Metric: []*dto.Metric{
		{
			Label:     []*dto.LabelPair{{Name: proto.String("controller"), Value: proto.String("raycluster")}},
			Histogram: &dto.Histogram{SampleCount: proto.Uint64(100), Bucket: []*dto.Bucket{bucket(0.01, 50), bucket(0.1, 98), bucket(1, 100)}},
		},
		{
			Label:     []*dto.LabelPair{{Name: proto.String("controller"), Value: proto.String("rayjob")}},
			Histogram: &dto.Histogram{},
		},
	}}
	got := reconcileTimes(mf)
	rc, ok := got["raycluster"]
	if len(got) != 1 || !ok || rc.Reconciles != 100 || math.Abs(rc.P50Seconds-0.01) > 1e-9 || math.Abs(rc.P99Seconds-0.55) > 1e-9 {
		t.Errorf("reconcileTimes = %+v; want only raycluster, 100 reconciles, p50 0.01, p99 0.55", got)
	}
}

func TestRatio(t *testing.T) {
	for _, tc := range []struct {
		a, b float64
		want string
	}{{1, 2, "0.50×"}, {3, 1, "3.00×"}, {1, 0, "–"}} {
		if got := ratio(tc.a, tc.b); got != tc.want {
			t.Errorf("ratio(%v, %v) = %q, want %q", tc.a, tc.b, got, tc.want)
		}
	}
}

// TestCompareTables: runs are grouped by family (the floor with the
// RayClusters) and size; each group lists ours, the reference, the floor;
// time is compared with the floor, memory, writes and CPU per object with
// the reference.
func TestCompareTables(t *testing.T) {
	results := []Result{
		{Kind: kindFloor, N: 20, Label: "floor", UserAgent: floorUserAgent, TimeToReadySeconds: 2, WritesTotal: 100},
		{Kind: kindRayCluster, N: 20, Label: "kuberay", UserAgent: "kuberay-operator", TimeToReadySeconds: 4, PeakRSSMiB: 100, WritesTotal: 400, CPUSeconds: 2,
			Reconcile: map[string]ReconcileTime{"raycluster": {P99Seconds: 0.25}}},
		{Kind: kindRayCluster, N: 20, Label: "ours", UserAgent: "ray-operator", TimeToReadySeconds: 3, PeakRSSMiB: 40, WritesTotal: 200, CPUSeconds: 1,
			LoadAvg: []float64{1, 0.5, 0.25}, ControlPlane: map[string]Usage{"kube-apiserver": {CPUSeconds: 5}, "etcd": {CPUSeconds: 1}}},
		{Kind: kindRayJob, N: 10, Label: "defaults", TimeToReadySeconds: 9},
		{Kind: kindRayCluster, N: 10, Label: "old line", TimeToReadySeconds: 1},
	}
	got := compareTables(results, "")
	sections := strings.Split(strings.TrimSpace(got), "### ")
	var heads []string
	for _, s := range sections[1:] {
		heads = append(heads, strings.SplitN(s, "\n", 2)[0])
	}
	if want := "[raycluster, N=10 raycluster, N=20 rayjob, N=10]"; fmt.Sprint(heads) != want {
		t.Fatalf("sections %v, want %s", heads, want)
	}
	rows := strings.Split(strings.TrimSpace(sections[2]), "\n")[4:]
	want := []string{
		"| ours | ours | 3.0 | 1.50× | 40 | 0.40× | 200 | 0.50× | 0.0500 | 0.50× | – | 5.0 / 1.0 / 0.0 / 0.0 / 0.0 | 1.00 0.50 0.25 |",
		"| kuberay | reference | 4.0 | 2.00× | 100 | 1.00× | 400 | 1.00× | 0.1000 | 1.00× | raycluster 0.250 | – | – |",
		"| floor | floor | 2.0 | 1.00× | – | – | 100 | 0.25× | – | – | – | – | – |",
	}
	if diff := cmp.Diff(want, rows); diff != "" {
		t.Errorf("N=20 rows (-want +got):\n%s\nfull output:\n%s", diff, got)
	}
	// Against a chosen reference: KubeRay v1.5.0 beside feeaf72.
	older := Result{Kind: kindRayCluster, N: 20, Label: "v1.5.0", UserAgent: "kuberay-operator", TimeToReadySeconds: 5, PeakRSSMiB: 80, WritesTotal: 500, CPUSeconds: 4}
	chosen := compareTables(append(slices.Clone(results), older), "kuberay")
	if !strings.Contains(chosen, "| ours | ours | 3.0 | 1.50× | 40 | 0.40× | 200 | 0.50× |") || !strings.Contains(chosen, "| v1.5.0 | reference | 5.0 | 2.50× | 80 | 0.80× | 500 | 1.25× |") {
		t.Errorf("-reference-label kuberay: ratios not against the run labelled kuberay:\n%s", chosen)
	}
	if !strings.Contains(sections[1], "| old line | ours | 1.0 | – |") {
		t.Errorf("a line without userAgent is not ours, or has a floor ratio:\n%s", sections[1])
	}
}

// TestPlotReady: the plot of two runs' series is a PNG file; runs without
// a series are left out, and none at all is an error.
func TestPlotReady(t *testing.T) {
	dir := t.TempDir()
	var results []Result
	for i, label := range []string{"ours", "floor"} {
		s := readySeries{}
		s.add(seriesPoint{0, 0})
		s.add(seriesPoint{1 + float64(i), 5})
		path := fmt.Sprintf("%s/%s.tsv", dir, label)
		if err := s.write(path); err != nil {
			t.Fatal(err)
		}
		results = append(results, Result{Kind: kindRayCluster, N: 5, Label: label, ReadySeries: path})
	}
	results = append(results, Result{Kind: kindRayJob, N: 5})
	png := dir + "/ready.png"
	if err := plotReady(results, png); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(png)
	if err != nil || !bytes.HasPrefix(data, []byte("\x89PNG")) {
		t.Errorf("%s is not a PNG (%v)", png, err)
	}
	if err := plotReady(results[2:], png); err == nil {
		t.Error("a plot of no series succeeded")
	}
}

func TestNodesFor(t *testing.T) {
	for _, tc := range []struct{ pods, least, want int }{
		{pods: 400, least: 10, want: 10},
		{pods: 4000, least: 10, want: 10},
		{pods: 9000, least: 10, want: 10},
		{pods: 9001, least: 10, want: 11},
		{pods: 12000, least: 10, want: 14},
		{pods: 40000, least: 10, want: 45},
	} {
		if got := nodesFor(tc.pods, tc.least); got != tc.want {
			t.Errorf("nodesFor(%d, %d) = %d; want %d", tc.pods, tc.least, got, tc.want)
		}
	}
}

// TestWaitQuiet: the wait ends at the first load under the threshold, at
// the deadline when the load stays up, and at once with no threshold.
func TestWaitQuiet(t *testing.T) {
	for name, tc := range map[string]struct {
		loads     []float64
		below     float64
		wantLoad  float64
		wantReads int
	}{
		"settles on the third read": {loads: []float64{6, 3, 1.2, 0.5}, below: 1.5, wantLoad: 1.2, wantReads: 3},
		"never settles":             {loads: []float64{6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6}, below: 1.5, wantLoad: 6, wantReads: 7},
		"no threshold":              {loads: []float64{6}, below: 0, wantLoad: 6, wantReads: 1},
	} {
		t.Run(name, func(t *testing.T) {
			clk := clocktesting.NewFakeClock(time.Unix(0, 0))
			reads := 0
			read := func() ([]float64, error) {
				l := tc.loads[reads]
				reads++
				return []float64{l, 0, 0}, nil
			}
			done := make(chan []float64)
			go func() {
				load, err := waitQuiet(t.Context(), clk, read, tc.below, 30*time.Second)
				if err != nil {
					t.Error(err)
				}
				done <- load
			}()
			for {
				select {
				case load := <-done:
					if load[0] != tc.wantLoad || reads != tc.wantReads {
						t.Errorf("returned load %v after %d reads; want %v after %d", load[0], reads, tc.wantLoad, tc.wantReads)
					}
					return
				default:
				}
				if clk.HasWaiters() {
					clk.Step(quietPoll)
				}
				runtime.Gosched()
			}
		})
	}
}

// TestAPIWriteLatencies: the series of one kind of write are summed over
// their other labels, the earlier scrape is subtracted, reads and kinds
// without writes in between are left out.
func TestAPIWriteLatencies(t *testing.T) {
	series := func(verb, resource, subresource, scope string, counts ...uint64) *dto.Metric {
		labels := []*dto.LabelPair{
			{Name: proto.String("verb"), Value: proto.String(verb)},
			{Name: proto.String("resource"), Value: proto.String(resource)},
			{Name: proto.String("subresource"), Value: proto.String(subresource)},
			{Name: proto.String("scope"), Value: proto.String(scope)},
		}
		h := &dto.Histogram{SampleCount: proto.Uint64(counts[len(counts)-1])}
		for i, le := range []float64{0.1, 1, 10} {
			h.Bucket = append(h.Bucket, &dto.Bucket{UpperBound: proto.Float64(le), CumulativeCount: proto.Uint64(counts[i])})
		}
		return &dto.Metric{Label: labels, Histogram: h}
	}
	before := &dto.MetricFamily{Metric: []*dto.Metric{
		series("POST", "pods", "", "resource", 10, 10, 10),
		series("PATCH", "rayclusters", "status", "resource", 5, 5, 5),
		series("POST", "namespaces", "", "cluster", 3, 3, 3),
	}}
	after := &dto.MetricFamily{Metric: []*dto.Metric{
		// 110 creates in the run over both scopes: 50 under 0.1 s, 40 more under 1 s, 20 under 10 s.
		series("POST", "pods", "", "resource", 50, 80, 90),
		series("POST", "pods", "", "namespace", 10, 20, 30),
		series("PATCH", "rayclusters", "status", "resource", 5, 5, 5),
		series("POST", "namespaces", "", "cluster", 3, 3, 3),
		series("LIST", "pods", "", "namespace", 0, 1000, 1000),
		series("GET", "pods", "", "resource", 7, 7, 7),
	}}
	got := apiLatencies(before, after, writeVerbs)
	want := map[string]APILatency{"POST pods": {Requests: 110, P50Seconds: 0.1 + 0.9*(55.0-50)/(90-50), P99Seconds: 1 + 9*(108.9-90)/(110-90)}}
	if len(got) != 1 || got["POST pods"].Requests != 110 ||
		math.Abs(got["POST pods"].P50Seconds-want["POST pods"].P50Seconds) > 1e-9 ||
		math.Abs(got["POST pods"].P99Seconds-want["POST pods"].P99Seconds) > 1e-9 {
		t.Errorf("latencies %+v, want %+v", got, want)
	}
	gets := apiLatencies(before, after, getVerbs)
	if len(gets) != 1 || gets["GET pods"].Requests != 7 || gets["GET pods"].P99Seconds > 0.1 {
		t.Errorf("reads %+v, want the 7 GETs of pods, all under 0.1 s", gets)
	}
}

func TestTerminatedWatchers(t *testing.T) {
	parse := func(text string) *dto.MetricFamily {
		t.Helper()
		parser := expfmt.NewTextParser(model.UTF8Validation)
		families, err := parser.TextToMetricFamilies(strings.NewReader(text))
		if err != nil {
			t.Fatal(err)
		}
		return families[terminatedWatchersCounter]
	}
	before := parse(`apiserver_terminated_watchers_total{group="",resource="pods"} 3
apiserver_terminated_watchers_total{group="ray.io",resource="rayjobs"} 2
`)
	after := parse(`# TYPE apiserver_terminated_watchers_total counter
apiserver_terminated_watchers_total{group="",resource="pods"} 40
apiserver_terminated_watchers_total{group="ray.io",resource="rayjobs"} 2
apiserver_terminated_watchers_total{group="ray.io",resource="rayclusters"} 5
`)
	want := map[string]int{"pods": 37, "rayclusters": 5}
	if diff := cmp.Diff(want, terminatedWatchers(before, after)); diff != "" {
		t.Errorf("terminated watchers (-want +got):\n%s", diff)
	}
	if got := terminatedWatchers(nil, nil); len(got) != 0 {
		t.Errorf("no counter in either scrape: %v, want none", got)
	}
}
