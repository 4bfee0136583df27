package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/testing/wrappers"
)

// rayClusters runs the operator binary, creates N RayClusters at once and
// waits until every one is ready.
func (w *world) rayClusters(ctx context.Context, res *Result) error {
	return w.runBinary(ctx, res, binaryRun{
		what: "RayClusters",
		create: func(ctx context.Context, i int) error {
			return w.client.Create(ctx, benchCluster(fmt.Sprintf("c%04d", i), w.o.namespaceOf(i), w.o.workers))
		},
		list: &rayv1.RayClusterList{},
		done: clusterReady,
	})
}

// binaryRun is what one run of the operator binary creates and waits for.
type binaryRun struct {
	what      string   // the objects' kind, plural, for the log
	extraArgs []string // operator flags besides the benchmark's
	create    func(ctx context.Context, i int) error
	list      client.ObjectList
	done      func(client.Object) bool
	started   func(began time.Time) // if set, told when the clock starts
}

// runBinary starts the operator binary, creates N objects at once, waits
// until every one is done, and records the run's figures.
func (w *world) runBinary(ctx context.Context, res *Result, r binaryRun) error {
	op, err := startOperator(ctx, w.o, w.cp.KubeconfigPath, w.dir, r.extraArgs...)
	if err != nil {
		return err
	}
	defer op.kill()
	if err := op.waitReady(ctx); err != nil {
		return err
	}
	prof := w.profiler(op)
	began := w.startClock()
	if r.started != nil {
		r.started(began)
	}
	if prof != nil {
		prof.startCPU(ctx, w.o.pprofCPUSeconds)
		if w.o.pprofTraceSeconds > 0 {
			prof.startTrace(ctx, w.o.pprofTraceSeconds)
		}
	}
	if err := createAll(ctx, w.n, r.create); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "bench-scale: %d %s created in %v\n", w.n, r.what, time.Since(began).Round(time.Millisecond))
	if err := waitAll(ctx, w.client, w.o.listNamespace(), r.list, w.n, &doneObjects{done: r.done}, w.series); err != nil {
		return err
	}
	res.TimeToReadySeconds = time.Since(began).Seconds()
	res.CPUSeconds = op.cpuSeconds()
	if err := w.stopClock(res); err != nil {
		return err
	}
	if prof != nil {
		if res.Profiles, err = prof.finish(ctx); err != nil {
			return err
		}
	}
	return w.finish(ctx, op, res)
}

// profiler fetches the operator's profiles with -pprof-dir, else is nil.
func (w *world) profiler(op *operatorProcess) *profiler {
	if op.pprofAddr == "" {
		return nil
	}
	return newProfiler(op.pprofAddr, w.o.pprofDir, w.kind, w.n, w.o.label)
}

// finish records the operator's reconcile times from its metrics endpoint
// and its writes, stops it, and records its peak memory.
func (w *world) finish(ctx context.Context, op *operatorProcess, res *Result) error {
	times, err := scrapeReconcileTimes(ctx, op.metricsAddr)
	if err != nil {
		return err
	}
	res.Reconcile = times
	writes, err := w.operatorWrites(ctx)
	if err != nil {
		return err
	}
	res.setWrites(writes)
	peak, err := op.stop()
	if err != nil {
		return err
	}
	res.PeakRSSMiB = peak
	return nil
}

// benchCluster is a RayCluster of one head and workers tiny workers, all
// asking for little, so that the kwok nodes' capacity never limits.
func benchCluster(name, ns string, workers int) *rayv1.RayCluster {
	small := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("32Mi")}
	spec := wrappers.MakeRayClusterSpec().
		WorkerGroup("small", int32(workers), int32(workers), int32(workers)).
		Requests(rayv1.HeadGroupName, small).Requests("small", small).Obj()
	return wrappers.MakeRayCluster(name, ns).Spec(spec).Obj()
}

func clusterReady(obj client.Object) bool {
	return obj.(*rayv1.RayCluster).Status.State == rayv1.Ready
}

// createAll calls create for 0..n-1 from createWorkers goroutines.
func createAll(ctx context.Context, n int, create func(context.Context, int) error) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(createWorkers)
	for i := range n {
		g.Go(func() error { return create(gctx, i) })
	}
	return g.Wait()
}

// createNamespaces creates the namespaces the run's objects go to.
func (w *world) createNamespaces(ctx context.Context) error {
	for _, ns := range w.o.namespaceNames() {
		if err := w.client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			return err
		}
	}
	return nil
}

// namespaceOf is the namespace of the i-th object of a run.
func (o *options) namespaceOf(i int) string {
	if o.namespaces <= 1 {
		return namespace
	}
	return fmt.Sprintf("%s-%03d", namespace, i%o.namespaces)
}

// namespaceNames lists the namespaces of a run.
func (o *options) namespaceNames() []string {
	names := make([]string, 0, o.namespaces)
	for i := range o.namespaces {
		names = append(names, o.namespaceOf(i))
	}
	return names
}

// listNamespace is where a run's objects are listed and watched: its one
// namespace, or all of them.
func (o *options) listNamespace() string {
	if o.namespaces <= 1 {
		return namespace
	}
	return metav1.NamespaceAll
}
