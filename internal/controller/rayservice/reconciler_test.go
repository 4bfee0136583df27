package rayservice

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/testing/wrappers"
)

// TestNewDefaults checks the defaults New fills in.
func TestNewDefaults(t *testing.T) {
	r := New(Deps{}, Options{})
	got := struct {
		InFlight, Idle time.Duration
		Version        string
		SuffixLen      int
		Defaults       []bool
	}{r.opts.InFlightRequeue, r.opts.IdleRequeue, r.opts.OperatorVersion, len(r.NameSuffix()),
		[]bool{r.Clock != nil, r.ProxyHealth != nil, r.opts.Features != nil}}
	want := struct {
		InFlight, Idle time.Duration
		Version        string
		SuffixLen      int
		Defaults       []bool
	}{2 * time.Second, 30 * time.Second, DefaultOperatorVersion, 5, []bool{true, true, true}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("defaults (-want +got):\n%s", diff)
	}
	r = New(Deps{}, Options{InFlightRequeue: time.Second, IdleRequeue: time.Minute, OperatorVersion: "v1.2.3"})
	if r.opts.InFlightRequeue != time.Second || r.opts.IdleRequeue != time.Minute || r.opts.OperatorVersion != "v1.2.3" {
		t.Errorf("options given were not kept: %+v", r.opts)
	}
}

// TestReconcile covers whole passes from the states a RayService goes
// through: first sight, creation, promotion and the idle state.
func TestReconcile(t *testing.T) {
	runPasses(t, map[string]passCase{
		"a missing RayService is not an error": {},
		"first pass only adds the finalizer": {
			objs:           []client.Object{wrappers.MakeRayService(testName, testNS).Obj()},
			wantResult:     ctrl.Result{RequeueAfter: DefaultInFlightRequeue},
			wantStatus:     &rayv1.RayServiceStatuses{},
			wantFinalizers: []string{rayv1.RayServiceFinalizer},
		},
		"a new RayService names its first cluster and starts Initializing": {
			objs:           []client.Object{rayService().Obj()},
			wantResult:     ctrl.Result{RequeueAfter: DefaultInFlightRequeue},
			wantStatus:     &initializing(rayService().PendingCluster(newCluster), t0).LastUpdateTime(t0).Obj().Status,
			wantFinalizers: []string{rayv1.RayServiceFinalizer},
		},
	})
}

// TestIdlePass checks that the pass of an idle RayService (Ready, every
// application RUNNING, no pending cluster) writes nothing, calls Serve
// only to read, and comes back at the idle interval.
func TestIdlePass(t *testing.T) {
	rs := serving(rayService()).Obj()
	e := newEnv(t, idleWorld(t, rs))
	e.serveRunning(active)
	before := e.rayService(t).ResourceVersion
	for pass := range 3 {
		result, err := e.reconcile(t)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(ctrl.Result{RequeueAfter: DefaultIdleRequeue}, result); diff != "" {
			t.Errorf("pass %d: result (-want +got):\n%s", pass, diff)
		}
		e.clock.Step(DefaultIdleRequeue)
	}
	if got := e.rayService(t).ResourceVersion; got != before {
		t.Errorf("an idle pass wrote the RayService (resourceVersion %s -> %s)", before, got)
	}
	if got := e.puts(active); len(got) != 0 {
		t.Errorf("serve configs PUT: %v", got)
	}
	if got := e.recordedEvents(); len(got) != 0 {
		t.Errorf("events: %v", got)
	}
}

var (
	_ = context.Background
	_ = corev1.PodRunning
	_ = metav1.ConditionTrue
)
