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
	op, err := startOperator(ctx, w.o, w.cp.KubeconfigPath, w.dir)
	if err != nil {
		return err
	}
	defer op.kill()
	if err := op.waitReady(ctx); err != nil {
		return err
	}
	began := time.Now()
	if err := createAll(ctx, w.n, func(ctx context.Context, i int) error {
		return w.client.Create(ctx, benchCluster(fmt.Sprintf("c%04d", i), w.o.workers))
	}); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "bench-scale: %d RayClusters created in %v\n", w.n, time.Since(began).Round(time.Millisecond))
	if err := waitAll(ctx, w.client, &rayv1.RayClusterList{}, w.n, clusterReady); err != nil {
		return err
	}
	res.TimeToReadySeconds = time.Since(began).Seconds()
	res.CPUSeconds = op.cpuSeconds()
	return w.finish(ctx, op, res)
}

// finish stops the operator, and records its writes and peak memory.
func (w *world) finish(ctx context.Context, op *operatorProcess, res *Result) error {
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
func benchCluster(name string, workers int) *rayv1.RayCluster {
	small := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("32Mi")}
	spec := wrappers.MakeRayClusterSpec().
		WorkerGroup("small", int32(workers), int32(workers), int32(workers)).
		Requests(rayv1.HeadGroupName, small).Requests("small", small).Obj()
	return wrappers.MakeRayCluster(name, namespace).Spec(spec).Obj()
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

func (w *world) createNamespace(ctx context.Context) error {
	return w.client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}})
}
