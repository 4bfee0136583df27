package raycronjob_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/controller/raycronjob"
	"github.com/ray-operator/ray-operator/internal/features"
	"github.com/ray-operator/ray-operator/internal/operator"
	"github.com/ray-operator/ray-operator/internal/testing/testenv"
	"github.com/ray-operator/ray-operator/internal/testing/wrappers"
)

func TestMain(m *testing.M) {
	ctrl.SetLogger(logr.Discard())
	os.Exit(testenv.Main(m))
}

// waitTimeout bounds every wait.
const waitTimeout = 30 * time.Second

// world is one test's namespace on the shared API server, the fake clock
// the operator's RayCronJob controller runs on (its schedule and its work
// queue), and the operator itself, which the test can stop and start
// again. No RayJob controller runs: the test plays it by writing RayJob
// statuses.
type world struct {
	t     *testing.T
	env   *testenv.Env
	c     client.Client
	ns    string
	clock *clocktesting.FakeClock
	run   testenv.Runner
}

// newWorld starts an operator for a fresh namespace, its clock at the
// current time.
func newWorld(t *testing.T) *world {
	env := testenv.Shared(t)
	w := &world{t: t, env: env, c: env.Client, ns: env.Namespace(t), clock: clocktesting.NewFakeClock(time.Now())}
	w.start()
	t.Cleanup(w.stop)
	return w
}

// start runs a new operator with the operator's cache scoping.
func (w *world) start() {
	w.t.Helper()
	mgr, err := ctrl.NewManager(w.env.Config, ctrl.Options{
		Scheme:     w.env.Scheme,
		Metrics:    metricsserver.Options{BindAddress: "0"},
		Cache:      operator.CacheOptions(w.ns),
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		w.t.Fatal(err)
	}
	r := raycronjob.NewForManager(mgr, raycronjob.Deps{Clock: w.clock}, raycronjob.Options{Features: features.NewGate()})
	if err := r.SetupWithManager(mgr, 1); err != nil {
		w.t.Fatal(err)
	}
	w.run.Start(mgr)
}

func (w *world) stop() { w.run.Stop() }

// restart stops the operator and starts a new one with empty caches, as a
// crashed and rescheduled operator Pod would.
func (w *world) restart() {
	w.stop()
	w.start()
}

// eventually polls cond until it holds or waitTimeout passes.
func (w *world) eventually(what string, cond func() (bool, error)) {
	w.t.Helper()
	w.poll(what, cond, nil)
}

// advanceTo moves the clock forward to at (never back) and waits for cond.
// A pass that computed its requeue before the clock moved queues it later
// than meant (the queue adds the delay to the clock's time when it gets
// the item), so while cond does not hold the clock creeps on by a second
// now and then; at is a schedule time and the tests' schedules have
// minutes between their times.
func (w *world) advanceTo(at time.Time, what string, cond func() (bool, error)) {
	w.t.Helper()
	if at.After(w.clock.Now()) {
		w.clock.SetTime(at)
	}
	w.poll(what, cond, func() { w.clock.Step(time.Second) })
}

func (w *world) poll(what string, cond func() (bool, error), nudge func()) {
	w.t.Helper()
	deadline := time.Now().Add(waitTimeout)
	lastNudge := time.Now()
	var lastErr error
	for time.Now().Before(deadline) {
		ok, err := cond()
		if ok {
			return
		}
		lastErr = err
		if nudge != nil && time.Since(lastNudge) > time.Second {
			nudge()
			lastNudge = time.Now()
		}
		time.Sleep(50 * time.Millisecond)
	}
	w.t.Fatalf("timed out waiting for %s (last: %v)", what, lastErr)
}

// create creates obj in the test namespace.
func (w *world) create(obj client.Object) {
	w.t.Helper()
	obj.SetNamespace(w.ns)
	if err := w.c.Create(context.Background(), obj); err != nil {
		w.t.Fatal(err)
	}
}

// cronJob reads a RayCronJob.
func (w *world) cronJob(name string) *rayv1.RayCronJob {
	w.t.Helper()
	cj := &rayv1.RayCronJob{}
	if err := w.c.Get(context.Background(), client.ObjectKey{Namespace: w.ns, Name: name}, cj); err != nil {
		w.t.Fatal(err)
	}
	return cj
}

// createCronJob creates a RayCronJob and returns it as stored, with its
// first schedule time: the first full minute after its creation (the
// tests' schedules run every minute).
func (w *world) createCronJob(cj *rayv1.RayCronJob) (*rayv1.RayCronJob, time.Time) {
	w.t.Helper()
	w.create(cj)
	stored := w.cronJob(cj.Name)
	return stored, stored.CreationTimestamp.Truncate(time.Minute).Add(time.Minute)
}

// rayJobs lists the RayJobs of the namespace that are not being deleted,
// by name.
func (w *world) rayJobs() []rayv1.RayJob {
	w.t.Helper()
	list := &rayv1.RayJobList{}
	if err := w.c.List(context.Background(), list, client.InNamespace(w.ns)); err != nil {
		w.t.Fatal(err)
	}
	list.Items = slices.DeleteFunc(list.Items, func(j rayv1.RayJob) bool { return !j.DeletionTimestamp.IsZero() })
	slices.SortFunc(list.Items, func(a, b rayv1.RayJob) int { return strings.Compare(a.Name, b.Name) })
	return list.Items
}

// rayJobNames lists the names of rayJobs.
func (w *world) rayJobNames() []string {
	w.t.Helper()
	var names []string
	for _, j := range w.rayJobs() {
		names = append(names, j.Name)
	}
	return names
}

// waitScheduled waits until the RayCronJob's lastScheduleTime is at: the
// pass that dealt with that time has written its status.
func (w *world) waitScheduled(name string, at time.Time) *rayv1.RayCronJob {
	w.t.Helper()
	var cj *rayv1.RayCronJob
	w.advanceTo(at, fmt.Sprintf("lastScheduleTime %v", at), func() (bool, error) {
		cj = w.cronJob(name)
		last := cj.Status.LastScheduleTime
		return last != nil && last.Time.Equal(at), fmt.Errorf("lastScheduleTime %v", last)
	})
	return cj
}

// setJobStatus plays the RayJob controller: it writes the RayJob's status.
func (w *world) setJobStatus(name string, mutate func(*wrappers.RayJobWrapper)) {
	w.t.Helper()
	w.eventually("status of RayJob "+name, func() (bool, error) {
		job := &rayv1.RayJob{}
		if err := w.c.Get(context.Background(), client.ObjectKey{Namespace: w.ns, Name: name}, job); err != nil {
			return false, err
		}
		wrapper := &wrappers.RayJobWrapper{RayJob: *job}
		mutate(wrapper)
		err := w.c.Status().Update(context.Background(), wrapper.Obj())
		return err == nil, err
	})
}

// hasEvent reports whether an event with reason regarding the RayCronJob
// exists.
func (w *world) hasEvent(cronJob, reason string) bool {
	w.t.Helper()
	list := &eventsv1.EventList{}
	if err := w.c.List(context.Background(), list, client.InNamespace(w.ns)); err != nil {
		w.t.Fatal(err)
	}
	for _, e := range list.Items {
		if e.Regarding.Kind == rayv1.KindRayCronJob && e.Regarding.Name == cronJob && e.Reason == reason {
			return true
		}
	}
	return false
}

// jobName is the RayJob name of a RayCronJob's schedule time.
func jobName(cronJob string, at time.Time) string {
	return fmt.Sprintf("%s-%d", cronJob, at.Unix()/60)
}

// everyMinute is a RayCronJob running the default RayJob spec every minute
// (UTC).
func everyMinute(name string) *wrappers.RayCronJobWrapper {
	w := wrappers.MakeRayCronJob(name, "").TimeZone("UTC")
	w.UID, w.Generation = "", 0 // the API server's to set
	return w
}

// minutes returns n schedule times a minute apart from first.
func minutes(first time.Time, n int) []time.Time {
	out := make([]time.Time, n)
	for i := range out {
		out[i] = first.Add(time.Duration(i) * time.Minute)
	}
	return out
}

// namesOf maps jobName over times.
func namesOf(cronJob string, times ...time.Time) []string {
	var out []string
	for _, t := range times {
		out = append(out, jobName(cronJob, t))
	}
	return out
}

// timeOf is a metav1.Time at t.
func timeOf(t time.Time) *metav1.Time { return &metav1.Time{Time: t} }
