package raycluster

import (
	"context"
	"fmt"
	"testing"
	"time"

	routev1 "github.com/openshift/api/route/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crlog "sigs.k8s.io/controller-runtime/pkg/log"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/managerdeps"
)

// benchContext carries a logger that drops everything: controller-runtime
// otherwise warns on stderr that no logger was set once a run passes 30 s.
func benchContext() context.Context {
	return ctrl.LoggerInto(context.Background(), ctrl.Log.WithSink(crlog.NullLogSink{}))
}

// benchWorkerCounts are the cluster sizes of the steady-state benchmarks.
var benchWorkerCounts = []int{10, 100, 1000}

// steadyCluster returns a Reconciler over the same fake client the unit
// tests use, holding a cluster "rc" with workers worker Pods that the
// Reconciler itself created and that are all Running and Ready, reconciled
// until a pass writes nothing.
func steadyCluster(b *testing.B, workers int) *Reconciler {
	b.Helper()
	ctx := benchContext()
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, rayv1.AddToScheme, routev1.Install} {
		if err := add(scheme); err != nil {
			b.Fatal(err)
		}
	}
	rc := makeCluster("rc").worker("small", int32(workers)).with(func(rc *rayv1.RayCluster) {
		rc.Spec.WorkerGroupSpecs[0].MaxReplicas = ptr.To(int32(workers))
	}).obj()
	c := fakeClientBuilder(scheme).WithObjects(rc).
		WithStatusSubresource(&rayv1.RayCluster{}, &corev1.Pod{}).Build()
	// A FakeRecorder without a channel drops events, so a long run cannot
	// fill a buffer and block.
	r := New(Deps{Core: managerdeps.Core{Client: c, Recorder: &events.FakeRecorder{}, Clock: clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))}}, Options{})
	req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: testNamespace, Name: "rc"}}

	if _, err := r.Reconcile(ctx, req); err != nil {
		b.Fatal(err)
	}
	var pods corev1.PodList
	if err := c.List(ctx, &pods, client.InNamespace(testNamespace)); err != nil {
		b.Fatal(err)
	}
	if len(pods.Items) != workers+1 {
		b.Fatalf("created %d Pods, want %d", len(pods.Items), workers+1)
	}
	for i := range pods.Items {
		runningReady(&pods.Items[i])
		if err := c.Status().Update(ctx, &pods.Items[i]); err != nil {
			b.Fatal(err)
		}
	}
	for range 5 {
		res, err := r.Reconcile(ctx, req)
		if err != nil {
			b.Fatal(err)
		}
		if res.RequeueAfter == defaultRequeue {
			return r
		}
	}
	b.Fatal("the cluster did not reach a steady state in 5 passes")
	return nil
}

// BenchmarkReconcileSteadyState is one full pass over a cluster whose Pods
// all exist and are Ready: the work done on every resync and on every
// unrelated Pod event. The fake client deep-copies every object it returns,
// as the informer cache's reads do not, so the figures are an upper bound of
// the controller's own cost.
func BenchmarkReconcileSteadyState(b *testing.B) {
	for _, workers := range benchWorkerCounts {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			r := steadyCluster(b, workers)
			ctx := benchContext()
			req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: testNamespace, Name: "rc"}}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				res, err := r.Reconcile(ctx, req)
				if err != nil {
					b.Fatal(err)
				}
				if res.RequeueAfter != defaultRequeue {
					b.Fatalf("pass wrote status (requeue %v): not a steady state", res.RequeueAfter)
				}
			}
		})
	}
}

// BenchmarkCalculateStatus is the status part of the steady-state pass
// alone: listing the cluster's Pods and head Service and deriving the new
// status from them.
func BenchmarkCalculateStatus(b *testing.B) {
	for _, workers := range benchWorkerCounts {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			r := steadyCluster(b, workers)
			ctx := benchContext()
			rc := &rayv1.RayCluster{}
			if err := r.Client.Get(ctx, types.NamespacedName{Namespace: testNamespace, Name: "rc"}, rc); err != nil {
				b.Fatal(err)
			}
			s := newScope(rc, DefaultMaxPodWritesPerPass)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if _, err := r.calculateStatus(ctx, s, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
