package raycluster

import (
	"context"
	"encoding/json"
	"runtime"
	"testing"
	"time"

	routev1 "github.com/openshift/api/route/v1"
	corev1 "k8s.io/api/core/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/managerdeps"
	"github.com/ray-operator/ray-operator/internal/testing/heappeak"
	"github.com/ray-operator/ray-operator/internal/testing/wrappers"
	"github.com/ray-operator/ray-operator/internal/validation"
)

// liveHeap is the heap after a collection.
func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// largestCluster is the largest RayCluster the API server stores
// (wrappers.LargestWorkerGroups groups, a 53-character name) over a fake
// client, and a Reconciler for it.
func largestCluster(b *testing.B) (*Reconciler, client.Client, *rayv1.RayCluster) {
	b.Helper()
	scheme := k8sruntime.NewScheme()
	for _, add := range []func(*k8sruntime.Scheme) error{clientgoscheme.AddToScheme, rayv1.AddToScheme, routev1.Install} {
		if err := add(scheme); err != nil {
			b.Fatal(err)
		}
	}
	rc := wrappers.LargeRayCluster(wrappers.LongName("c", 0, validation.MaxRayClusterNameLength), testNamespace, wrappers.LargestWorkerGroups)
	c := fakeClientBuilder(scheme).WithObjects(rc).
		WithStatusSubresource(&rayv1.RayCluster{}, &corev1.Pod{}).Build()
	r := New(Deps{Core: managerdeps.Core{Client: c, Recorder: &events.FakeRecorder{}, Clock: clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))}}, Options{})
	return r, c, rc
}

// BenchmarkLargestRayCluster measures what the largest RayCluster the API
// server accepts costs the operator: one object of ~1.46 MB of JSON with
// 3,400 worker groups (two of them with a worker).
//   - decode: decoding the object from JSON once, as the informer does on
//     every change (decoded-MB is what the decoded object occupies);
//   - first-pass: the Reconcile that creates its head, two workers and
//     head Service and writes its status;
//   - steady: a Reconcile once its Pods are Running and Ready.
//
// Each reports peak-heap-MB, the largest heap seen while the timed passes
// ran (the fake client's own copies included).
func BenchmarkLargestRayCluster(b *testing.B) {
	b.Run("decode", func(b *testing.B) {
		_, _, rc := largestCluster(b)
		data, err := json.Marshal(rc)
		if err != nil {
			b.Fatal(err)
		}
		before := liveHeap()
		kept := &rayv1.RayCluster{}
		if err := json.Unmarshal(data, kept); err != nil {
			b.Fatal(err)
		}
		decoded := liveHeap() - before
		runtime.KeepAlive(kept)
		b.ReportAllocs()
		b.SetBytes(int64(len(data)))
		sampler := heappeak.Start(100 * time.Microsecond)
		for b.Loop() {
			if err := json.Unmarshal(data, &rayv1.RayCluster{}); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(sampler.Stop())/(1<<20), "peak-heap-MB")
		b.ReportMetric(float64(decoded)/(1<<20), "decoded-MB")
	})
	// The body of a status patch, as the real client computes it
	// (MergeFrom's Data), from whole objects and from statusOnly copies,
	// which writeStatus uses.
	for _, whole := range []bool{true, false} {
		name := map[bool]string{true: "status-patch-whole-objects", false: "status-patch-status-only"}[whole]
		b.Run(name, func(b *testing.B) {
			_, _, rc := largestCluster(b)
			status := rc.Status.DeepCopy()
			status.State = rayv1.Ready
			b.ReportAllocs()
			sampler := heappeak.Start(100 * time.Microsecond)
			for b.Loop() {
				before, after := statusOnly(rc), statusOnly(rc)
				before.Status, after.Status = rc.Status, *status
				if whole {
					before, after = rc, rc.DeepCopy()
					after.Status = *status
				}
				data, err := client.MergeFrom(before).Data(after)
				if err != nil || len(data) > 100 {
					b.Fatalf("patch %q: %v", data, err)
				}
			}
			b.ReportMetric(float64(sampler.Stop())/(1<<20), "peak-heap-MB")
		})
	}
	b.Run("first-pass", func(b *testing.B) {
		ctx := benchContext()
		b.ReportAllocs()
		var peak uint64
		for b.Loop() {
			b.StopTimer()
			r, c, rc := largestCluster(b)
			req := ctrl.Request{NamespacedName: client.ObjectKeyFromObject(rc)}
			sampler := heappeak.Start(100 * time.Microsecond)
			b.StartTimer()
			if _, err := r.Reconcile(ctx, req); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			peak = max(peak, sampler.Stop())
			checkLargestPods(ctx, b, c, 3)
			b.StartTimer()
		}
		b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
	})
	b.Run("steady", func(b *testing.B) {
		ctx := benchContext()
		r, c, rc := largestCluster(b)
		req := ctrl.Request{NamespacedName: client.ObjectKeyFromObject(rc)}
		if _, err := r.Reconcile(ctx, req); err != nil {
			b.Fatal(err)
		}
		pods := checkLargestPods(ctx, b, c, 3)
		for i := range pods {
			runningReady(&pods[i])
			if err := c.Status().Update(ctx, &pods[i]); err != nil {
				b.Fatal(err)
			}
		}
		settle(ctx, b, r, req)
		b.ReportAllocs()
		sampler := heappeak.Start(100 * time.Microsecond)
		for b.Loop() {
			res, err := r.Reconcile(ctx, req)
			if err != nil {
				b.Fatal(err)
			}
			if res.RequeueAfter != defaultRequeue {
				b.Fatalf("pass wrote status (requeue %v): not a steady state", res.RequeueAfter)
			}
		}
		b.ReportMetric(float64(sampler.Stop())/(1<<20), "peak-heap-MB")
	})
}

// checkLargestPods checks that the cluster has n Pods and returns them.
func checkLargestPods(ctx context.Context, b *testing.B, c client.Client, n int) []corev1.Pod {
	b.Helper()
	var pods corev1.PodList
	if err := c.List(ctx, &pods, client.InNamespace(testNamespace)); err != nil {
		b.Fatal(err)
	}
	if len(pods.Items) != n {
		b.Fatalf("%d Pods, want %d", len(pods.Items), n)
	}
	return pods.Items
}

// settle reconciles until a pass writes nothing.
func settle(ctx context.Context, b *testing.B, r *Reconciler, req ctrl.Request) {
	b.Helper()
	for range 5 {
		res, err := r.Reconcile(ctx, req)
		if err != nil {
			b.Fatal(err)
		}
		if res.RequeueAfter == defaultRequeue {
			return
		}
	}
	b.Fatal("no steady state in 5 passes")
}
