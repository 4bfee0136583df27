package rayservice

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	crlog "sigs.k8s.io/controller-runtime/pkg/log"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/clusterindex"
	"github.com/ray-operator/ray-operator/internal/dashboard/dashboardtest"
	"github.com/ray-operator/ray-operator/internal/features"
	"github.com/ray-operator/ray-operator/internal/managerdeps"
)

// kubeRayPassesPerMinute is what KubeRay spends on the same RayService: it
// requeues every RayService every 2 s whatever its state.
const kubeRayPassesPerMinute = 30

// BenchmarkIdleRayService is one pass over an idle RayService (Ready, its
// one application RUNNING, no pending cluster, one serve endpoint) with the
// default Options, over the fake client the unit tests use and an
// in-memory Serve: the pass every idle RayService makes, each time it comes
// back. It reports, besides the cost of a pass, how many passes an idle
// RayService gets per minute, from the RequeueAfter the pass returns.
// Setup checks the state is steady; every timed pass must write nothing
// and ask for the idle interval, or the benchmark fails.
func BenchmarkIdleRayService(b *testing.B) {
	ctx := ctrl.LoggerInto(context.Background(), ctrl.Log.WithSink(crlog.NullLogSink{}))
	rs := serving(rayService()).Obj()
	c := fake.NewClientBuilder().WithScheme(testScheme(b)).WithObjects(idleWorld(b, rs)...).
		WithIndex(&corev1.Pod{}, clusterindex.Pods, clusterindex.ClusterOf).
		WithStatusSubresource(&rayv1.RayService{}, &rayv1.RayCluster{}).Build()
	serve := dashboardtest.NewServeFleet()
	serve.SetAppStatus(dashboardtest.URLFor(active, testNS), "app", rayv1.ApplicationStatusRunning)
	r := New(Deps{
		// A FakeRecorder without a channel drops events.
		Core:        managerdeps.Core{Client: c, Recorder: &events.FakeRecorder{}, Clock: clocktesting.NewFakeClock(t0)},
		Dashboards:  serve.Provider(),
		ProxyHealth: func(context.Context, *corev1.Pod, int32) error { return nil },
		NameSuffix:  func() string { return testSuffix },
	}, Options{ZeroDowntime: true, Features: features.NewGate()})
	req := ctrl.Request{NamespacedName: client.ObjectKey{Namespace: testNS, Name: testName}}
	version := func() string {
		got := &rayv1.RayService{}
		if err := c.Get(ctx, req.NamespacedName, got); err != nil {
			b.Fatal(err)
		}
		return got.ResourceVersion
	}
	pass := func() time.Duration {
		result, err := r.Reconcile(ctx, req)
		if err != nil {
			b.Fatal(err)
		}
		return result.RequeueAfter
	}
	pass()
	steady := version()
	requeue := pass()
	if requeue != DefaultIdleRequeue {
		b.Fatalf("an idle pass asked to come back after %v, want the idle interval %v", requeue, DefaultIdleRequeue)
	}

	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if got := pass(); got != requeue {
			b.Fatalf("a pass asked to come back after %v, want %v", got, requeue)
		}
	}
	b.StopTimer()
	if got := version(); got != steady {
		b.Fatalf("the RayService was written during the benchmark (resourceVersion %s -> %s): not a steady state", steady, got)
	}
	passesPerMinute := float64(time.Minute) / float64(requeue)
	b.ReportMetric(passesPerMinute, "passes/min")
	b.ReportMetric(kubeRayPassesPerMinute/passesPerMinute, "fewer-than-kuberay-x")
}
