// Command bench-scale (make bench-scale) measures the operator at scale on
// the local control plane: a real etcd, kube-apiserver, kube-scheduler and
// kube-controller-manager (client QPS raised so that neither throttles) and
// kwok nodes, as `make run` starts them, with the API server's audit log on.
//
// For each size N it starts a fresh control plane and
//   - raycluster: runs the operator binary, creates N RayClusters of one head
//     and three tiny workers at once, and waits until all are ready;
//   - rayjob: runs the operator's manager in-process (its dashboard clients
//     reach simulated dashboards over HTTP, with injected latency), creates N
//     HTTPMode RayJobs at once and waits until all are Complete;
//   - rayjob-binary: the same RayJobs with the operator binary (this one, or
//     -operator-binary such as KubeRay's), which reaches the simulated
//     dashboards through the API server's service proxy at each head Pod's
//     own address; the benchmark re-executes itself in a network namespace
//     of its own (as root) where every such address is local;
//   - floor: with no operator, creates the head Services and Pods the
//     operator would make for raycluster's N RayClusters (its own builders)
//     and waits until every Pod is Running and Ready: the machine's floor.
//
// It prints one JSON line per run (and appends it to -json) and a Markdown
// table row: time to ready, the operator's writes by verb and resource from
// the audit log, its CPU time and peak RSS; the JSON line also holds the
// load average before the run, the control plane's CPU time and memory, the
// reconcile times per controller and the path of a ready-over-time series.
// -compare FILE prints comparison tables of such lines (ours, a reference
// build, the floor) and -plot draws their series. It is a benchmark, not a
// test: nothing here passes or fails on a figure.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ray-operator/ray-operator/internal/operator"
)

func main() {
	var o options
	flag.StringVar(&o.kinds, "kinds", "raycluster", "What to measure, comma-separated: raycluster, rayjob, rayjob-binary (RayJobs with the operator binary, in a network namespace of its own; needs root), floor (the raycluster run's Pods and head Services created directly, with no operator).")
	flag.StringVar(&o.sizes, "sizes", "100,300,1000", "Comma-separated numbers of RayClusters (or RayJobs) to create, one fresh control plane each.")
	flag.StringVar(&o.operatorEnv, "operator-env", "", "raycluster, rayjob-binary: environment variables for the operator process, space-separated KEY=VALUE (e.g. \"GOGC=75\"); nothing else started gets them.")
	flag.StringVar(&o.operatorFlags, "operator-flags", "", "Extra flags for the operator, space-separated, e.g. \"--qps=1000 --burst=1000 --reconcile-concurrency=10\".")
	flag.StringVar(&o.label, "label", "", "A label for the run in the report (default: the operator flags, or \"defaults\").")
	flag.StringVar(&o.binary, "operator-binary", "", "raycluster, rayjob-binary: run this operator binary instead of building ./cmd/ray-operator (e.g. one built from an older commit, or KubeRay's).")
	flag.StringVar(&o.userAgent, "operator-user-agent", operator.UserAgent, "raycluster, rayjob-binary: count the writes of clients whose user agent starts with this (KubeRay's binary says \"kuberay-operator\").")
	flag.StringVar(&o.jsonOut, "json", "", "Append each run's JSON line to this file too.")
	flag.StringVar(&o.stateDir, "state-dir", "", "Directory for the control plane's data, logs and the audit log (default <repo>/.cache/bench-scale).")
	flag.IntVar(&o.nodes, "nodes", 10, "Least number of kwok nodes; more are started when a size's Pods would fill them past 90 % (each holds 1,000 Pods).")
	flag.IntVar(&o.kwokPodParallelism, "kwok-pod-parallelism", 0, "Pods kwok plays a stage for at once (its podPlayStageParallelism; each play waits for its status patch); 0 keeps kwok's own default, 4. 16 made a 10,000-RayJob run slower (docs/dev/benchmarks.md).")
	flag.IntVar(&o.workers, "workers", 3, "Worker Pods per RayCluster.")
	flag.IntVar(&o.namespaces, "namespaces", 1, "Spread each run's objects round-robin over this many namespaces (bench-000, bench-001, ...); 1 puts them all in bench.")
	flag.Float64Var(&o.quietLoad, "quiet-load", 1.5, "Before each run, wait until the 1-minute load average is below this (the last run's control plane and audit log read settle), for at most -quiet-wait; 0 does not wait.")
	flag.DurationVar(&o.quietWait, "quiet-wait", 5*time.Minute, "The longest wait for -quiet-load.")
	flag.Float64Var(&o.slowFraction, "slow-fraction", 0.05, "rayjob: fraction of dashboards answering in 2 s.")
	flag.Float64Var(&o.timeoutFraction, "timeout-fraction", 0.02, "rayjob: fraction of dashboard requests held past the client's 2 s timeout.")
	flag.DurationVar(&o.latency, "latency", defaultLatency, "rayjob: the typical dashboard latency.")
	flag.BoolVar(&o.instant, "instant-dashboards", false, "rayjob: every dashboard answers at once (the baseline of the 1.5x goal).")
	flag.StringVar(&o.pprofDir, "pprof-dir", "", "raycluster and rayjob-binary, this operator's binary: save its CPU profile over the first -pprof-cpu-seconds after the first create, and its heap and allocs profiles at the end, into this directory (<kind>-<N>-<label>-<profile>.pprof).")
	flag.IntVar(&o.pprofCPUSeconds, "pprof-cpu-seconds", 30, "Length of the CPU profile with -pprof-dir; the run waits for it.")
	flag.IntVar(&o.pprofTraceSeconds, "pprof-trace-seconds", 0, "With -pprof-dir: also save a runtime execution trace of the operator over this many seconds from the first create (<...>-trace.out; go tool trace -pprof=sched shows how long goroutines waited to run); 0 takes none.")
	flag.StringVar(&o.compare, "compare", "", "Print comparison tables of the JSON lines in this file (see -plot) instead of running.")
	flag.StringVar(&o.referenceLabel, "reference-label", "", "With -compare: the ratios are against the reference build's run with this label (default: the last run of a reference build, any user agent but this operator's, at that size).")
	flag.StringVar(&o.plot, "plot", "", "With -compare: also draw the ready-over-time series of those runs into this PNG file.")
	flag.Parse()
	setUpLogging()
	if o.compare != "" {
		if err := compare(o.compare, o.plot, o.referenceLabel); err != nil {
			fmt.Fprintln(os.Stderr, "bench-scale:", err)
			os.Exit(1)
		}
		return
	}
	if err := o.complete(); err != nil {
		fmt.Fprintln(os.Stderr, "bench-scale:", err)
		os.Exit(2)
	}
	if needsNetns(o.kindList) {
		if err := enterNetns(); err != nil {
			fmt.Fprintln(os.Stderr, "bench-scale:", err)
			os.Exit(1)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, &o); err != nil {
		fmt.Fprintln(os.Stderr, "bench-scale:", err)
		os.Exit(1)
	}
}

// options are the command's flags, parsed.
type options struct {
	kinds, sizes, operatorFlags, label, jsonOut, stateDir, binary, userAgent string
	pprofDir, compare, plot, referenceLabel, operatorEnv                     string
	nodes, workers, namespaces, pprofCPUSeconds, pprofTraceSeconds           int
	kwokPodParallelism                                                       int
	quietLoad                                                                float64
	quietWait                                                                time.Duration
	slowFraction, timeoutFraction                                            float64
	latency                                                                  time.Duration
	instant                                                                  bool

	sizeList []int
	kindList []string
	opArgs   []string
	opEnv    []string
	root     string
}

// processEnv is -operator-env's variables for a run of kind: none for the
// kinds that run no operator process (rayjob runs it in-process, the floor
// none).
func (o *options) processEnv(kind string) []string {
	if kind == kindRayCluster || kind == kindRayJobBinary {
		return o.opEnv
	}
	return nil
}

func (o *options) complete() error {
	for s := range strings.SplitSeq(o.sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n <= 0 {
			return fmt.Errorf("-sizes: %q is not a positive number", s)
		}
		o.sizeList = append(o.sizeList, n)
	}
	for k := range strings.SplitSeq(o.kinds, ",") {
		switch k = strings.TrimSpace(k); k {
		case kindRayCluster, kindRayJob, kindRayJobBinary, kindFloor:
			o.kindList = append(o.kindList, k)
		default:
			return fmt.Errorf("-kinds: unknown kind %q (raycluster, rayjob, rayjob-binary, floor)", k)
		}
	}
	o.opArgs = strings.Fields(o.operatorFlags)
	for _, kv := range strings.Fields(o.operatorEnv) {
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
			return fmt.Errorf("-operator-env: %q is not KEY=VALUE", kv)
		}
		o.opEnv = append(o.opEnv, kv)
	}
	if o.label == "" {
		o.label = "defaults"
		if len(o.opArgs) > 0 {
			o.label = strings.Join(o.opArgs, " ")
		}
	}
	if o.nodes <= 0 || o.workers < 0 || o.namespaces <= 0 {
		return errors.New("-nodes and -namespaces must be positive and -workers not negative")
	}
	if o.pprofDir != "" && (o.userAgent != operator.UserAgent || o.pprofCPUSeconds <= 0) {
		return errors.New("-pprof-dir needs this operator's binary (its --pprof-bind-address; not -operator-user-agent " + o.userAgent + ") and a positive -pprof-cpu-seconds")
	}
	if o.pprofTraceSeconds < 0 || (o.pprofTraceSeconds > 0 && o.pprofDir == "") {
		return errors.New("-pprof-trace-seconds needs -pprof-dir and may not be negative")
	}
	return nil
}

// run measures every kind at every size, one fresh control plane each.
func run(ctx context.Context, o *options) error {
	root, err := repoRoot()
	if err != nil {
		return err
	}
	o.root = root
	if o.stateDir == "" {
		o.stateDir = root + "/.cache/bench-scale"
	}
	fmt.Println(tableHeader)
	for _, kind := range o.kindList {
		for _, n := range o.sizeList {
			res, err := measure(ctx, o, kind, n)
			if err != nil {
				return fmt.Errorf("%s at N=%d: %w", kind, n, err)
			}
			if err := report(o, res); err != nil {
				return err
			}
		}
	}
	return nil
}
