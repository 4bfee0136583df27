package rayjob

import (
	"context"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	crlog "sigs.k8s.io/controller-runtime/pkg/log"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/dashboard"
	"github.com/ray-operator/ray-operator/internal/dashboard/dashboardtest"
	"github.com/ray-operator/ray-operator/internal/features"
	"github.com/ray-operator/ray-operator/internal/managerdeps"
)

// BenchmarkReconcileRunning is one pass over a Running K8sJobMode RayJob
// whose cluster is Ready, whose submitter Job runs and whose Ray job the
// fake dashboard reports Running: the pass every RayJob makes each poll
// interval while its job runs. It asks the dashboard once per pass (the
// fake answers from memory, so no network time is included).
func BenchmarkReconcileRunning(b *testing.B) {
	ctx := ctrl.LoggerInto(context.Background(), ctrl.Log.WithSink(crlog.NullLogSink{}))
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, rayv1.AddToScheme} {
		if err := add(scheme); err != nil {
			b.Fatal(err)
		}
	}
	objs := append([]client.Object{makeJob(inState(rayv1.JobDeploymentStatusRunning))}, running("")...)
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).
		WithStatusSubresource(&rayv1.RayJob{}, &rayv1.RayCluster{}, &batchv1.Job{}).Build()
	dash := dashboardtest.NewFake()
	dash.AddJob(rayJobInfo(rayv1.JobStatusRunning, uint64(t0.UnixMilli())))
	// The fake's own Provider records every URL it hands a client for, which
	// would grow without bound here; this one only counts.
	provided := 0
	provider := func(string, string) (dashboard.Client, error) {
		provided++
		return dash, nil
	}
	// A FakeRecorder without a channel drops events.
	r := New(Deps{
		Core:       managerdeps.Core{Client: c, Recorder: &events.FakeRecorder{}, Clock: clocktesting.NewFakeClock(t0)},
		Dashboards: provider}, Options{TransitionGracePeriod: 300 * time.Second, Features: features.NewGate()})
	req := ctrl.Request{NamespacedName: client.ObjectKey{Namespace: testNS, Name: testJobName}}

	// The first pass creates the RayJob's head Service and records the job
	// status; from then on a pass changes nothing.
	version := func() string {
		job := &rayv1.RayJob{}
		if err := c.Get(ctx, req.NamespacedName, job); err != nil {
			b.Fatal(err)
		}
		if job.Status.JobDeploymentStatus != rayv1.JobDeploymentStatusRunning {
			b.Fatalf("deployment status %q, want Running", job.Status.JobDeploymentStatus)
		}
		return job.ResourceVersion
	}
	for range 2 {
		if _, err := r.Reconcile(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
	steady, askedBefore := version(), provided

	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := r.Reconcile(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if got := version(); got != steady {
		b.Fatalf("the RayJob was written during the benchmark (resourceVersion %s -> %s): not a steady state", steady, got)
	}
	if provided == askedBefore {
		b.Fatal("no pass asked the dashboard")
	}
}
