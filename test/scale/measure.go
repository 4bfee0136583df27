package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/auditlog"
	"github.com/ray-operator/ray-operator/internal/controlplane"
)

const (
	kindRayCluster = "raycluster"
	kindRayJob     = "rayjob"

	// namespace holds every object a run creates.
	namespace = "bench"
	// componentQPS unthrottles kube-scheduler and kube-controller-manager.
	componentQPS = 1000
	// createWorkers is how many objects are created concurrently.
	createWorkers = 32
	// defaultLatency is the typical simulated dashboard latency.
	defaultLatency = 50 * time.Millisecond
)

// Result is one run: what was measured, at which size, with which flags.
type Result struct {
	Kind  string `json:"kind"`
	N     int    `json:"n"`
	Label string `json:"label"`
	// Seconds from the first create until the last object was seen ready
	// (RayClusters: state ready; RayJobs: Complete).
	TimeToReadySeconds float64 `json:"timeToReadySeconds"`
	// Writes are the operator's successful writes by "<verb> <resource>",
	// from the audit log; WritesTotal and WritesNonEvent sum them.
	Writes         auditlog.Counts `json:"writes"`
	WritesTotal    int             `json:"writesTotal"`
	WritesNonEvent int             `json:"writesNonEvent"`
	// CPUSeconds is the operator's user+system CPU time until all were
	// ready; PeakRSSMiB its peak resident memory over the run.
	CPUSeconds float64 `json:"cpuSeconds"`
	PeakRSSMiB float64 `json:"peakRSSMiB"`
	// Extra holds kind-specific figures (RayJobs: dashboard calls per job,
	// reconcile latency percentiles).
	Extra map[string]float64 `json:"extra,omitempty"`
	// Machine says where it ran.
	CPUs int    `json:"cpus"`
	Date string `json:"date"`
}

// measure runs one kind at one size on a fresh control plane.
func measure(ctx context.Context, o *options, kind string, n int) (*Result, error) {
	dir := filepath.Join(o.stateDir, fmt.Sprintf("%s-%d", kind, n))
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	auditPath := filepath.Join(dir, "audit.log")
	fmt.Fprintf(os.Stderr, "bench-scale: %s N=%d: starting the control plane in %s\n", kind, n, dir)
	cp, err := controlplane.Start(ctx, controlplane.Options{
		StateDir:     dir,
		Nodes:        o.nodes,
		CRDDirs:      []string{filepath.Join(o.root, "config", "crd", "bases")},
		AuditLogPath: auditPath,
		ComponentQPS: componentQPS,
		StartTimeout: 5 * time.Minute,
	})
	if err != nil {
		return nil, err
	}
	defer func() { _ = cp.Stop() }()
	c, err := newClient(cp)
	if err != nil {
		return nil, err
	}
	env := &world{o: o, cp: cp, client: c, dir: dir, auditPath: auditPath, n: n}
	if err := env.createNamespace(ctx); err != nil {
		return nil, err
	}
	res := &Result{Kind: kind, N: n, Label: o.label, CPUs: runtimeCPUs(), Date: time.Now().UTC().Format(time.DateOnly)}
	switch kind {
	case kindRayCluster:
		err = env.rayClusters(ctx, res)
	case kindRayJob:
		err = env.rayJobs(ctx, res)
	}
	if err != nil {
		return nil, err
	}
	return res, nil
}

// world is one run's control plane and client.
type world struct {
	o         *options
	cp        *controlplane.ControlPlane
	client    client.WithWatch
	dir       string // the run's directory: control plane state, audit log, operator log
	auditPath string
	n         int
}

func newClient(cp *controlplane.ControlPlane) (client.WithWatch, error) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return nil, err
	}
	if err := rayv1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	cfg := *cp.RESTConfig
	cfg.QPS, cfg.Burst = -1, 0 // the benchmark's own client never waits
	cfg.UserAgent = "bench-scale"
	return client.NewWithWatch(&cfg, client.Options{Scheme: scheme})
}

// operatorWrites counts the operator's successful writes in the audit log,
// reading until two reads a second apart agree: the API server writes a
// request's line after answering it.
func (w *world) operatorWrites(ctx context.Context) (auditlog.Counts, error) {
	var last auditlog.Counts
	for {
		events, err := auditlog.Read(w.auditPath)
		if err != nil {
			return nil, err
		}
		counts := auditlog.WriteCounts(events, auditlog.ByUserAgent(w.o.userAgent))
		if last != nil && counts.Total() == last.Total() {
			return counts, nil
		}
		last = counts
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

func (r *Result) setWrites(c auditlog.Counts) {
	r.Writes = c
	r.WritesTotal = c.Total()
	r.WritesNonEvent = r.WritesTotal - c.Events()
}
