package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"syscall"
	"time"

	dto "github.com/prometheus/client_model/go"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/operator"
	"github.com/ray-operator/ray-operator/internal/testing/wrappers"
)

// rayJobs runs the operator's manager in-process with its dashboard clients
// pointed at simulated dashboards, creates N HTTPMode RayJobs at once and
// waits until every one is Complete.
func (w *world) rayJobs(ctx context.Context, res *Result) error {
	dash := newSimDashboards(w.o)
	dash.serveInProcess()
	defer dash.close()
	stop, err := w.startInProcess(ctx, dash)
	if err != nil {
		return err
	}
	defer stop()
	dashCtx, cancelDash := context.WithCancel(ctx)
	defer cancelDash()
	go dash.runJobs(dashCtx)

	cpu0 := selfCPUSeconds()
	began := w.startClock()
	if err := createAll(ctx, w.n, func(ctx context.Context, i int) error {
		return w.client.Create(ctx, benchJob(fmt.Sprintf("j%04d", i), w.o.namespaceOf(i), w.o.workers))
	}); err != nil {
		return err
	}
	done := &completions{began: began, at: map[string]time.Duration{}, cluster: map[string]string{}}
	if err := waitAll(ctx, w.client, w.o.listNamespace(), &rayv1.RayJobList{}, w.n, &doneObjects{done: done.record}, w.series); err != nil {
		return err
	}
	res.TimeToReadySeconds = time.Since(began).Seconds()
	res.CPUSeconds = selfCPUSeconds() - cpu0
	if err := w.stopClock(res); err != nil {
		return err
	}
	res.Extra = dash.extra(w.n)
	done.byClass(dash, res.Extra)
	reconcileQuantiles(res)
	writes, err := w.operatorWrites(ctx)
	if err != nil {
		return err
	}
	res.setWrites(writes)
	res.PeakRSSMiB = selfPeakRSSMiB()
	return nil
}

// startInProcess starts the operator's manager in this process, with the
// benchmark's operator flags and the simulated dashboards; stop ends it.
func (w *world) startInProcess(ctx context.Context, dash *simDashboards) (func(), error) {
	fs := flag.NewFlagSet("operator", flag.ContinueOnError)
	flags := operator.BindFlags(fs)
	args := append([]string{"--enable-leader-election=false", "--metrics-addr=0", "--health-probe-bind-address=0"}, w.o.opArgs...)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	settings, err := flags.Resolve(os.LookupEnv)
	if err != nil {
		return nil, err
	}
	settings.Dashboards = dash.provider()
	settings.SkipControllerNameValidation = true // one manager per size, in one process
	logFile, err := os.Create(filepath.Join(w.dir, "operator.log"))
	if err != nil {
		return nil, err
	}
	operatorLog.Set(logFile)
	mgr, err := operator.New(settings, w.cp.RESTConfig)
	if err != nil {
		return nil, err
	}
	mgrCtx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := mgr.Start(mgrCtx); err != nil {
			fmt.Fprintln(os.Stderr, "bench-scale: manager:", err)
		}
	})
	return func() {
		cancel()
		wg.Wait()
		operatorLog.Set(nil)
		_ = logFile.Close()
	}, nil
}

// benchJob is an HTTPMode RayJob on a cluster like benchCluster's.
func benchJob(name, ns string, workers int) *rayv1.RayJob {
	spec := wrappers.MakeRayJobSpec()
	spec.SubmissionMode = rayv1.HTTPMode
	spec.RayClusterSpec = &benchCluster(name, ns, workers).Spec
	job := wrappers.MakeRayJob(name, ns).Spec(spec).Obj()
	job.UID = ""
	return job
}

// completions records when each RayJob was first seen Complete.
type completions struct {
	began   time.Time
	at      map[string]time.Duration
	cluster map[string]string // RayJob -> its RayCluster
}

func (c *completions) record(obj client.Object) bool {
	job := obj.(*rayv1.RayJob)
	if job.Status.JobDeploymentStatus != rayv1.JobDeploymentStatusComplete {
		return false
	}
	if _, ok := c.at[job.Name]; !ok {
		c.at[job.Name] = time.Since(c.began)
		c.cluster[job.Name] = job.Status.RayClusterName
	}
	return true
}

// byClass adds the median and slowest completion time of the jobs of each
// dashboard class, and how many there were.
func (c *completions) byClass(dash *simDashboards, extra map[string]float64) {
	times := map[dashClass][]float64{}
	for name, d := range c.at {
		class := dash.classOf(c.cluster[name])
		times[class] = append(times[class], d.Seconds())
	}
	for class, ts := range times {
		sort.Float64s(ts)
		extra[string(class)+"Jobs"] = float64(len(ts))
		extra[string(class)+"P50s"] = ts[len(ts)/2]
		extra[string(class)+"MaxS"] = ts[len(ts)-1]
	}
}

func selfCPUSeconds() float64 {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		return 0
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano()).Seconds()
}

func selfPeakRSSMiB() float64 {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		return 0
	}
	return float64(u.Maxrss) / 1024
}

// reconcileQuantiles sets the reconcile times of the in-process manager's
// controllers from controller-runtime's histogram, and adds the RayJob
// controller's to extra as before.
func reconcileQuantiles(res *Result) {
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		return
	}
	for _, mf := range families {
		if mf.GetName() != reconcileHistogram {
			continue
		}
		res.Reconcile = reconcileTimes(mf)
		for _, m := range mf.GetMetric() {
			if labelValue(m.GetLabel(), "controller") != "rayjob" {
				continue
			}
			h := m.GetHistogram()
			for _, q := range []float64{0.5, 0.95, 0.99} {
				res.Extra[fmt.Sprintf("reconcileP%.0fs", q*100)] = histogramQuantile(q, h)
			}
			res.Extra["reconciles"] = float64(h.GetSampleCount())
		}
	}
}

// histogramQuantile estimates quantile q of h by linear interpolation
// within the bucket it falls in, as Prometheus' histogram_quantile does.
func histogramQuantile(q float64, h *dto.Histogram) float64 {
	total := float64(h.GetSampleCount())
	if total == 0 {
		return 0
	}
	rank := q * total
	lower, below := 0.0, 0.0
	for _, b := range h.GetBucket() {
		count := float64(b.GetCumulativeCount())
		if count >= rank {
			if count == below {
				return b.GetUpperBound()
			}
			return lower + (b.GetUpperBound()-lower)*(rank-below)/(count-below)
		}
		lower, below = b.GetUpperBound(), count
	}
	return lower
}
