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
//     HTTPMode RayJobs at once and waits until all are Complete.
//
// It prints one JSON line per run (and appends it to -json) and a Markdown
// table row: time to ready, the operator's writes by verb and resource from
// the audit log, its CPU time and peak RSS. It is a benchmark, not a test:
// nothing here passes or fails on a figure.
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
	flag.StringVar(&o.kinds, "kinds", "raycluster", "What to measure: raycluster, rayjob, or both, comma-separated.")
	flag.StringVar(&o.sizes, "sizes", "100,300,1000", "Comma-separated numbers of RayClusters (or RayJobs) to create, one fresh control plane each.")
	flag.StringVar(&o.operatorFlags, "operator-flags", "", "Extra flags for the operator, space-separated, e.g. \"--qps=1000 --burst=1000 --reconcile-concurrency=10\".")
	flag.StringVar(&o.label, "label", "", "A label for the run in the report (default: the operator flags, or \"defaults\").")
	flag.StringVar(&o.binary, "operator-binary", "", "raycluster: run this operator binary instead of building ./cmd/ray-operator (e.g. one built from an older commit, for a before/after table).")
	flag.StringVar(&o.userAgent, "operator-user-agent", operator.UserAgent, "raycluster: count the writes of clients whose user agent starts with this (KubeRay's binary says \"kuberay-operator\").")
	flag.StringVar(&o.jsonOut, "json", "", "Append each run's JSON line to this file too.")
	flag.StringVar(&o.stateDir, "state-dir", "", "Directory for the control plane's data, logs and the audit log (default <repo>/.cache/bench-scale).")
	flag.IntVar(&o.nodes, "nodes", 10, "Number of kwok nodes.")
	flag.IntVar(&o.workers, "workers", 3, "Worker Pods per RayCluster.")
	flag.Float64Var(&o.slowFraction, "slow-fraction", 0.05, "rayjob: fraction of dashboards answering in 2 s.")
	flag.Float64Var(&o.timeoutFraction, "timeout-fraction", 0.02, "rayjob: fraction of dashboard requests held past the client's 2 s timeout.")
	flag.DurationVar(&o.latency, "latency", defaultLatency, "rayjob: the typical dashboard latency.")
	flag.BoolVar(&o.instant, "instant-dashboards", false, "rayjob: every dashboard answers at once (the baseline of the 1.5x goal).")
	flag.Parse()
	if err := o.complete(); err != nil {
		fmt.Fprintln(os.Stderr, "bench-scale:", err)
		os.Exit(2)
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
	nodes, workers                                                           int
	slowFraction, timeoutFraction                                            float64
	latency                                                                  time.Duration
	instant                                                                  bool

	sizeList []int
	kindList []string
	opArgs   []string
	root     string
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
		case kindRayCluster, kindRayJob:
			o.kindList = append(o.kindList, k)
		default:
			return fmt.Errorf("-kinds: unknown kind %q (raycluster, rayjob)", k)
		}
	}
	o.opArgs = strings.Fields(o.operatorFlags)
	if o.label == "" {
		o.label = "defaults"
		if len(o.opArgs) > 0 {
			o.label = strings.Join(o.opArgs, " ")
		}
	}
	if o.nodes <= 0 || o.workers < 0 {
		return errors.New("-nodes must be positive and -workers not negative")
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
