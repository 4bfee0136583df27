package main

import (
	"fmt"
	"math"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"google.golang.org/protobuf/proto"
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

func TestOptions(t *testing.T) {
	o := options{sizes: "10, 20", kinds: "raycluster,rayjob", operatorFlags: "--qps=5  --burst=10", nodes: 1}
	if err := o.complete(); err != nil {
		t.Fatal(err)
	}
	if len(o.sizeList) != 2 || o.sizeList[1] != 20 || len(o.kindList) != 2 || len(o.opArgs) != 2 || o.label != "--qps=5 --burst=10" {
		t.Errorf("options %+v", o)
	}
	for _, bad := range []options{{sizes: "0", kinds: "raycluster", nodes: 1}, {sizes: "1", kinds: "raypod", nodes: 1}} {
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
