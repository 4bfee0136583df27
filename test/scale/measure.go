package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/auditlog"
	"github.com/ray-operator/ray-operator/internal/controlplane"
)

const (
	kindRayCluster = "raycluster"
	kindRayJob     = "rayjob"
	// kindRayJobBinary is RayJobs with the operator binary, which reaches
	// simulated dashboards over the network (rayjobsbinary.go).
	kindRayJobBinary = "rayjob-binary"
	kindFloor        = "floor"

	// namespace holds every object a run creates, unless -namespaces
	// spreads them over namespace-000, namespace-001, ...
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
	// UserAgent is whose writes were counted: the operator's (this one's
	// or the reference build's), or the benchmark's own for the floor.
	UserAgent string `json:"userAgent"`
	// OperatorEnv is -operator-env's variables, when set.
	OperatorEnv []string `json:"operatorEnv,omitempty"`
	// Seconds from the first create until the last object was seen ready
	// (RayClusters: state ready; RayJobs: Complete).
	TimeToReadySeconds float64 `json:"timeToReadySeconds"`
	// Writes are the operator's successful writes by "<verb> <resource>",
	// from the audit log; WritesTotal and WritesNonEvent sum them.
	Writes         auditlog.Counts `json:"writes"`
	WritesTotal    int             `json:"writesTotal"`
	WritesNonEvent int             `json:"writesNonEvent"`
	// RefusedWrites are the operator's writes the API server answered
	// with an error, by "<verb> <resource> <code>" (409: a conflict, or
	// a create of what exists). They are not in Writes, but each cost the
	// API server a request and the operator a pass.
	RefusedWrites auditlog.Counts `json:"refusedWrites,omitempty"`
	// CPUSeconds is the operator's user+system CPU time until all were
	// ready; PeakRSSMiB its peak resident memory over the run.
	CPUSeconds float64 `json:"cpuSeconds"`
	PeakRSSMiB float64 `json:"peakRSSMiB"`
	// Reconcile is the operator's reconcile time by controller, from
	// controller-runtime's histogram (raycluster runs of the binary).
	Reconcile map[string]ReconcileTime `json:"reconcile,omitempty"`
	// LoadAvg is the machine's 1, 5 and 15 minute load average read just
	// before the run's control plane started.
	LoadAvg []float64 `json:"loadAvg"`
	// ControlPlane is each control plane component's CPU time from the
	// first create until all were ready, and its peak RSS until then.
	ControlPlane map[string]Usage `json:"controlPlane"`
	// APIServerWrites is the API server's latency of each kind of write
	// ("POST pods", "PATCH rayclusters/status"), everyone's (the operator's,
	// kwok's, the scheduler's, the benchmark's), from the first create until
	// all were ready: how long the API server took to answer the writes a
	// pass waits for.
	APIServerWrites map[string]APILatency `json:"apiServerWrites,omitempty"`
	// APIServerGets is the same for the reads of one object ("GET pods"):
	// the operator's reads past its cache (a created Pod the cache does
	// not show yet is read live) and anyone else's.
	APIServerGets map[string]APILatency `json:"apiServerGets,omitempty"`
	// TerminatedWatchers is how many watches of each resource the API
	// server closed from the first create until all were ready because
	// their client did not take the events in time (everyone's: the
	// operator's, kwok's, the scheduler's...). Each is a watch started
	// again, and the cache of its client behind meanwhile.
	TerminatedWatchers map[string]int `json:"terminatedWatchers,omitempty"`
	// OthersRefusedWrites are the refused writes of every other client
	// (kwok, the scheduler, the controller manager, the harness) by
	// "<client> <verb> <resource> <code>": e.g. kwok's Pod status patches
	// refused for a second Pod IP, which make a run slow for reasons of
	// the harness, not the operator.
	OthersRefusedWrites auditlog.Counts `json:"othersRefusedWrites,omitempty"`
	// ReadySeries is the file of the ready-over-time series (seconds since
	// the first create, objects done), for plots.
	ReadySeries string `json:"readySeries"`
	// Profiles are the pprof files fetched from the operator (-pprof-dir).
	Profiles []string `json:"profiles,omitempty"`
	// Extra holds kind-specific figures (RayJobs: dashboard calls per job,
	// reconcile latency percentiles).
	Extra map[string]float64 `json:"extra,omitempty"`
	// Nodes is the number of kwok nodes the run had.
	Nodes int `json:"nodes"`
	// Namespaces is how many namespaces the objects were spread over.
	Namespaces int `json:"namespaces"`
	// KwokPodParallelism is kwok's podPlayStageParallelism in the run (0:
	// kwok's default, 4; runs before the flag existed have none).
	KwokPodParallelism int `json:"kwokPodParallelism,omitempty"`
	// Machine says where it ran.
	CPUs int    `json:"cpus"`
	Date string `json:"date"`
}

// nodesFor is the number of kwok nodes for pods Pods: at least least, and
// enough that the Pods fill at most 90 % of their room
// (controlplane.KwokNodePods each), so that the scheduler never runs out
// of it (3,000 clusters of 4 Pods need 14 nodes).
func nodesFor(pods, least int) int {
	room := controlplane.KwokNodePods * 9 / 10
	return max(least, (pods+room-1)/room)
}

// measure runs one kind at one size on a fresh control plane.
func measure(ctx context.Context, o *options, kind string, n int) (*Result, error) {
	dir := filepath.Join(o.stateDir, fmt.Sprintf("%s-%d", kind, n))
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	auditPath := filepath.Join(dir, "audit.log")
	load, err := waitQuiet(ctx, clock.RealClock{}, loadAvg, o.quietLoad, o.quietWait)
	if err != nil {
		return nil, err
	}
	nodes := nodesFor(n*(1+o.workers), o.nodes)
	fmt.Fprintf(os.Stderr, "bench-scale: %s N=%d: load average %v; starting the control plane (%d kwok nodes) in %s\n", kind, n, load, nodes, dir)
	cpOpts := controlplane.Options{
		StateDir:           dir,
		Nodes:              nodes,
		KwokPodParallelism: o.kwokPodParallelism,
		CRDDirs:            []string{filepath.Join(o.root, "config", "crd", "bases")},
		AuditLogPath:       auditPath,
		ComponentQPS:       componentQPS,
		StartTimeout:       5 * time.Minute,
	}
	if kind == kindRayJobBinary {
		cpOpts.KwokPodCIDR = benchPodCIDR // a dashboard address per head Pod
	}
	cp, err := controlplane.Start(ctx, cpOpts)
	if err != nil {
		return nil, err
	}
	defer func() { _ = cp.Stop() }()
	c, err := newClient(cp)
	if err != nil {
		return nil, err
	}
	env := &world{o: o, cp: cp, client: c, dir: dir, auditPath: auditPath, kind: kind, n: n}
	if err := env.createNamespaces(ctx); err != nil {
		return nil, err
	}
	agent := o.userAgent
	if kind == kindFloor {
		agent = floorUserAgent
	}
	res := &Result{Kind: kind, N: n, Label: o.label, UserAgent: agent, OperatorEnv: o.processEnv(kind), LoadAvg: load, Nodes: nodes, Namespaces: o.namespaces, KwokPodParallelism: o.kwokPodParallelism, CPUs: runtimeCPUs(), Date: time.Now().UTC().Format(time.DateOnly)}
	switch kind {
	case kindRayCluster:
		err = env.rayClusters(ctx, res)
	case kindRayJob:
		err = env.rayJobs(ctx, res)
	case kindRayJobBinary:
		err = env.rayJobsBinary(ctx, res)
	case kindFloor:
		err = env.floor(ctx, res)
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
	kind      string
	n         int

	// Set by startClock: the control plane's CPU time then, by component,
	// and the ready series.
	cpu0   map[string]float64
	series *readySeries
	// api0 is the API server's metrics then, or why they could not be
	// read.
	api0    apiMetrics
	api0Err error
}

// startClock starts the run's clock before the first create: it notes the
// control plane's CPU time and starts the ready series.
func (w *world) startClock() time.Time {
	w.api0, w.api0Err = scrapeAPIServer(context.Background(), w.cp.RESTConfig)
	began := time.Now()
	w.cpu0 = map[string]float64{}
	for name, pid := range w.cp.PIDs() {
		w.cpu0[name] = procCPUSeconds(pid)
	}
	w.series = newReadySeries(began)
	w.series.add(seriesPoint{})
	return began
}

// stopClock records, once all are done, the control plane's CPU time since
// startClock and peak memory by component, and writes the ready series
// next to the -json file (or into the run's directory).
func (w *world) stopClock(res *Result) error {
	if w.api0Err != nil {
		return w.api0Err
	}
	api, err := scrapeAPIServer(context.Background(), w.cp.RESTConfig)
	if err != nil {
		return err
	}
	res.APIServerWrites = apiLatencies(w.api0.latency, api.latency, writeVerbs)
	res.APIServerGets = apiLatencies(w.api0.latency, api.latency, getVerbs)
	res.TerminatedWatchers = terminatedWatchers(w.api0.terminatedWatchers, api.terminatedWatchers)
	res.ControlPlane = map[string]Usage{}
	for name, pid := range w.cp.PIDs() {
		rss, err := procPeakRSSMiB(pid)
		if err != nil {
			return err
		}
		res.ControlPlane[name] = Usage{CPUSeconds: procCPUSeconds(pid) - w.cpu0[name], PeakRSSMiB: rss}
	}
	dir := w.dir
	if w.o.jsonOut != "" {
		dir = filepath.Dir(w.o.jsonOut)
	}
	path, err := filepath.Abs(filepath.Join(dir, fmt.Sprintf("ready-%s-%d-%s-%s.tsv", w.kind, w.n, slug(res.Label), time.Now().UTC().Format("20060102T150405"))))
	if err != nil {
		return err
	}
	res.ReadySeries = path
	return w.series.write(path)
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

// writeCounts are a client's writes in the audit log: those that
// succeeded, and those the API server refused; and the other clients'
// refused writes.
type writeCounts struct {
	ok, refused, othersRefused auditlog.Counts
}

// operatorWrites counts the operator's writes in the audit log, reading
// until two reads a second apart agree: the API server writes a request's
// line after answering it.
func (w *world) operatorWrites(ctx context.Context) (writeCounts, error) {
	return w.writesBy(ctx, w.o.userAgent)
}

// writesBy counts the writes of clients whose user agent starts with
// userAgent, as operatorWrites does.
func (w *world) writesBy(ctx context.Context, userAgent string) (writeCounts, error) {
	var last writeCounts
	for {
		events, err := auditlog.Read(w.auditPath)
		if err != nil {
			return writeCounts{}, err
		}
		keep := auditlog.ByUserAgent(userAgent)
		others := func(e auditlog.Event) bool { return !keep(e) }
		counts := writeCounts{ok: auditlog.WriteCounts(events, keep), refused: auditlog.RefusedWriteCounts(events, keep), othersRefused: auditlog.RefusedWritesByClient(events, others)}
		if last.ok != nil && counts.ok.Total() == last.ok.Total() && counts.refused.Total() == last.refused.Total() {
			return counts, nil
		}
		last = counts
		select {
		case <-ctx.Done():
			return writeCounts{}, ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

func (r *Result) setWrites(c writeCounts) {
	r.Writes = c.ok
	r.WritesTotal = c.ok.Total()
	r.WritesNonEvent = r.WritesTotal - c.ok.Events()
	if len(c.refused) > 0 {
		r.RefusedWrites = c.refused
	}
	if len(c.othersRefused) > 0 {
		r.OthersRefusedWrites = c.othersRefused
	}
}
