package raycronjob

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/features"
	"github.com/ray-operator/ray-operator/internal/managerdeps"
	"github.com/ray-operator/ray-operator/internal/testing/wrappers"
)

const (
	testNS   = "ns"
	testName = "cron"
)

// t0 is when the test RayCronJobs are created: 20 s past a minute.
var t0 = time.Date(2026, 3, 2, 10, 0, 20, 0, time.UTC)

// minute returns the minute m minutes after 10:00 on t0's day.
func minute(m int) time.Time { return time.Date(2026, 3, 2, 10, m, 0, 0, time.UTC) }

// testEnv is a Reconciler over a fake client, a fake clock, a fake event
// recorder and fake metrics.
type testEnv struct {
	r       *Reconciler
	c       client.Client
	clock   *clocktesting.FakeClock
	events  *events.FakeRecorder
	metrics *fakeMetrics
}

func newScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, rayv1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	return scheme
}

// newFakeClient returns a fake API server holding objs.
func newFakeClient(t *testing.T, objs ...client.Object) client.Client {
	t.Helper()
	return fake.NewClientBuilder().WithScheme(newScheme(t)).WithObjects(objs...).
		WithStatusSubresource(&rayv1.RayCronJob{}, &rayv1.RayJob{}).Build()
}

// newEnv builds a testEnv holding objs, its clock at now.
func newEnv(t *testing.T, now time.Time, objs ...client.Object) *testEnv {
	t.Helper()
	e := &testEnv{
		c:       newFakeClient(t, objs...),
		clock:   clocktesting.NewFakeClock(now),
		events:  events.NewFakeRecorder(1000),
		metrics: &fakeMetrics{counts: map[string]int{}},
	}
	e.r = New(Deps{Core: managerdeps.Core{Client: e.c, Recorder: e.events, Clock: e.clock}, Metrics: e.metrics}, Options{Features: features.NewGate()})
	return e
}

// reconcile runs one pass over the test RayCronJob and fails the test on
// an error.
func (e *testEnv) reconcile(t *testing.T) ctrl.Result {
	t.Helper()
	res, err := e.r.Reconcile(t.Context(), ctrl.Request{NamespacedName: client.ObjectKey{Namespace: testNS, Name: testName}})
	if err != nil {
		t.Fatalf("Reconcile: %v", err)
	}
	return res
}

// runUntil plays the operator from the clock's time until end: a pass,
// then the clock moves to the requeue the pass asked for, and so on. It
// fails when a pass asks for no requeue before end.
func (e *testEnv) runUntil(t *testing.T, end time.Time) {
	t.Helper()
	for i := 0; ; i++ {
		res := e.reconcile(t)
		if res.RequeueAfter <= 0 {
			t.Fatalf("pass at %v asked for no requeue", e.clock.Now())
		}
		if !e.clock.Now().Add(res.RequeueAfter).Before(end) || i > 10000 {
			return
		}
		e.clock.Step(res.RequeueAfter)
	}
}

// cronJob reads the test RayCronJob back.
func (e *testEnv) cronJob(t *testing.T) *rayv1.RayCronJob {
	t.Helper()
	cj := &rayv1.RayCronJob{}
	if err := e.c.Get(t.Context(), client.ObjectKey{Namespace: testNS, Name: testName}, cj); err != nil {
		t.Fatal(err)
	}
	return cj
}

// update re-reads the RayCronJob, changes it and writes it back.
func (e *testEnv) update(t *testing.T, mutate func(*rayv1.RayCronJob)) {
	t.Helper()
	cj := e.cronJob(t)
	mutate(cj)
	if err := e.c.Update(t.Context(), cj); err != nil {
		t.Fatal(err)
	}
}

// rayJobs lists the RayJobs of the namespace, by name.
func (e *testEnv) rayJobs(t *testing.T) []rayv1.RayJob {
	t.Helper()
	list := &rayv1.RayJobList{}
	if err := e.c.List(t.Context(), list, client.InNamespace(testNS)); err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(list.Items, func(a, b rayv1.RayJob) int { return oldestFirst(&a, &b) })
	return list.Items
}

// rayJobNames lists the names of the RayJobs of the namespace, oldest first.
func (e *testEnv) rayJobNames(t *testing.T) []string {
	t.Helper()
	var names []string
	for _, job := range e.rayJobs(t) {
		names = append(names, job.Name)
	}
	return names
}

// setDeploymentStatus plays the RayJob controller for one RayJob.
func (e *testEnv) setDeploymentStatus(t *testing.T, name string, mutate func(*wrappers.RayJobWrapper)) {
	t.Helper()
	job := &rayv1.RayJob{}
	if err := e.c.Get(t.Context(), client.ObjectKey{Namespace: testNS, Name: name}, job); err != nil {
		t.Fatal(err)
	}
	w := &wrappers.RayJobWrapper{RayJob: *job}
	mutate(w)
	updated := w.Obj()
	if err := e.c.Status().Update(t.Context(), updated); err != nil {
		t.Fatal(err)
	}
}

// drainEvents returns the events recorded since the last call.
func (e *testEnv) drainEvents() []string {
	var out []string
	for {
		select {
		case ev := <-e.events.Events:
			out = append(out, ev)
		default:
			return out
		}
	}
}

// jobName is the name of the test RayCronJob's RayJob of schedule time t.
func jobName(t time.Time) string { return fmt.Sprintf("%s-%d", testName, t.Unix()/60) }

// jobNames maps jobName over times.
func jobNames(times ...time.Time) []string {
	var names []string
	for _, t := range times {
		names = append(names, jobName(t))
	}
	return names
}

// minutes returns minute(from) to minute(to), inclusive.
func minutes(from, to int) []time.Time {
	var out []time.Time
	for m := from; m <= to; m++ {
		out = append(out, minute(m))
	}
	return out
}

// created is the CreatedRayJob event of schedule time t.
func created(t time.Time) string {
	return fmt.Sprintf("Normal CreatedRayJob Created RayJob %s for the schedule time %s", jobName(t), t.UTC().Format(time.RFC3339))
}

// createdEvents maps created over times.
func createdEvents(times ...time.Time) []string {
	var out []string
	for _, t := range times {
		out = append(out, created(t))
	}
	return out
}

// cronJob is the test RayCronJob created at t0.
func cronJob() *wrappers.RayCronJobWrapper {
	return wrappers.MakeRayCronJob(testName, testNS).Created(t0)
}

// ownedJob is a RayJob of the test RayCronJob for schedule time t, as the
// controller creates it.
func ownedJob(t time.Time) *wrappers.RayJobWrapper {
	cj := cronJob().Obj()
	job := buildRayJob(cj, t)
	w := &wrappers.RayJobWrapper{RayJob: *job}
	w.UID = types.UID("uid-" + job.Name)
	return w
}

// fakeMetrics counts creations by "name/outcome".
type fakeMetrics struct {
	mu     sync.Mutex
	counts map[string]int
}

func (m *fakeMetrics) ObserveRayJobCreation(name, _ string, outcome string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.counts[name+"/"+outcome]++
}

func (m *fakeMetrics) DeleteRayCronJobMetrics(name, _ string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k := range m.counts {
		if len(k) > len(name) && k[:len(name)+1] == name+"/" {
			delete(m.counts, k)
		}
	}
}

// reqFor is the request of a RayCronJob.
func reqFor(cj *rayv1.RayCronJob) ctrl.Request {
	return ctrl.Request{NamespacedName: client.ObjectKeyFromObject(cj)}
}
