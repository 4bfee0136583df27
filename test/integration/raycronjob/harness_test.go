package raycronjob_test

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/controller/raycronjob"
	"github.com/ray-operator/ray-operator/internal/features"
	"github.com/ray-operator/ray-operator/internal/operator"
	"github.com/ray-operator/ray-operator/internal/testing/testenv"
	"github.com/ray-operator/ray-operator/internal/testing/wrappers"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// world is one test's namespace on the shared API server, the fake clock
// the operator's RayCronJob controller runs on (its schedule and its work
// queue), and the operator itself, which the test can stop and start
// again. No RayJob controller runs: the test plays it by writing RayJob
// statuses.
type world struct {
	*testenv.World
	clock *clocktesting.FakeClock
	op    *testenv.Operator
}

// newWorld starts an operator for a fresh namespace, its clock at the
// current time.
func newWorld(t *testing.T) *world {
	w := &world{World: testenv.NewWorld(t, testenv.Shared(t)), clock: newClock()}
	w.op = testenv.StartOperator(t, w.Env, operator.CacheOptions(w.NS), func(mgr manager.Manager) error {
		return raycronjob.NewForManager(mgr, raycronjob.Deps{Clock: w.clock}, raycronjob.Options{Features: features.NewGate()}).SetupWithManager(mgr, 1)
	})
	return w
}

// newClock is a fake clock a second short of the next full minute. The
// tests' RayCronJobs, created right after, run first at that minute, so the
// controller's first pass requeues them about a second ahead. Started at
// the current time instead, that pass could requeue up to a minute ahead,
// and if the queue took the item only after the test had moved the clock to
// the schedule time, it would wait up to a minute past it (see advanceTo):
// TestOperatorWiresRayCronJob, the first test to run, failed that way on
// loaded CI machines.
func newClock() *clocktesting.FakeClock {
	now := time.Now()
	return clocktesting.NewFakeClock(now.Truncate(time.Minute).Add(time.Minute - time.Second))
}

// advanceTo moves the clock forward to at (never back) and waits for cond.
// A pass that computed its requeue before the clock moved queues it later
// than meant (the queue adds the delay to the clock's time when it gets
// the item): up to a whole minute later when the first pass ran just
// before SetTime. So while cond does not hold the clock creeps on, a second
// every 200 ms, but never by more than maxCreep, which keeps it short of
// the next schedule time (the tests' schedules have minutes between their
// times). Creeping a second per real second, as before, could not cover a
// requeue of more than 30 s within Eventually's timeout: the flake of
// TestOperatorWiresRayCronJob under load.
func (w *world) advanceTo(at time.Time, what string, cond func() (bool, error)) {
	w.T.Helper()
	if at.After(w.clock.Now()) {
		w.clock.SetTime(at)
	}
	const maxCreep = 50 * time.Second
	start, lastNudge := w.clock.Now(), time.Now()
	w.Eventually(what, func() (bool, error) {
		ok, err := cond()
		if !ok && time.Since(lastNudge) > 200*time.Millisecond && w.clock.Since(start) < maxCreep {
			w.clock.Step(time.Second)
			lastNudge = time.Now()
		}
		return ok, err
	})
}

// cronJob reads a RayCronJob.
func (w *world) cronJob(name string) *rayv1.RayCronJob {
	w.T.Helper()
	cj := &rayv1.RayCronJob{}
	if !w.Get(name, cj) {
		w.T.Fatalf("RayCronJob %s is gone", name)
	}
	return cj
}

// createCronJob creates a RayCronJob and returns it as stored, with its
// first schedule time: the first full minute after its creation (the
// tests' schedules run every minute).
func (w *world) createCronJob(cj *rayv1.RayCronJob) (*rayv1.RayCronJob, time.Time) {
	w.T.Helper()
	w.Create(cj)
	stored := w.cronJob(cj.Name)
	return stored, stored.CreationTimestamp.Truncate(time.Minute).Add(time.Minute)
}

// rayJobs lists the RayJobs of the namespace that are not being deleted,
// by name.
func (w *world) rayJobs() []rayv1.RayJob {
	w.T.Helper()
	list := &rayv1.RayJobList{}
	w.List(list)
	list.Items = slices.DeleteFunc(list.Items, func(j rayv1.RayJob) bool { return !j.DeletionTimestamp.IsZero() })
	slices.SortFunc(list.Items, func(a, b rayv1.RayJob) int { return strings.Compare(a.Name, b.Name) })
	return list.Items
}

// rayJobNames lists the names of rayJobs.
func (w *world) rayJobNames() []string {
	w.T.Helper()
	var names []string
	for _, j := range w.rayJobs() {
		names = append(names, j.Name)
	}
	return names
}

// waitScheduled waits until the RayCronJob's lastScheduleTime is at: the
// pass that dealt with that time has written its status.
func (w *world) waitScheduled(name string, at time.Time) *rayv1.RayCronJob {
	w.T.Helper()
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
	w.T.Helper()
	job := &rayv1.RayJob{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: w.NS}}
	w.UpdateStatus(job, func() {
		wrapper := &wrappers.RayJobWrapper{RayJob: *job}
		mutate(wrapper)
		wrapper.DeepCopyInto(job)
	})
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
