// Package raycronjob_test runs the RayCronJob controller against a real
// kube-apiserver and etcd (envtest) with a fake clock: schedules, time zones,
// concurrency policies, history limits, suspension and restarts, each test
// asserting the requeue time the controller asked for before it moves the
// clock there.
package raycronjob_test

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/controller/raycronjob"
	"github.com/ray-operator/ray-operator/internal/features"
	"github.com/ray-operator/ray-operator/internal/managerdeps"
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
	clock *queueClock
	op    *testenv.Operator
}

// newWorld starts an operator for a fresh namespace, its clock at the
// current time.
func newWorld(t *testing.T) *world {
	w := &world{World: testenv.NewWorld(t, testenv.Shared(t)), clock: newClock()}
	w.op = testenv.StartOperator(t, w.Env, operator.CacheOptions(w.NS), func(mgr manager.Manager) error {
		w.clock.newOperator()
		return raycronjob.NewForManager(mgr, raycronjob.Deps{Core: managerdeps.Core{Clock: w.clock}}, raycronjob.Options{Features: features.NewGate()}).SetupWithManager(mgr, 1)
	})
	return w
}

// retryWindow is how far past a schedule time the clock follows the
// controller's requeues while the pass for that time has not yet written
// its status: a pass that failed (a write conflict under load) asks to be
// retried errorRequeue (3 s) later. That is far short of the next schedule
// time (the tests' schedules have minutes between their times).
const retryWindow = 10 * time.Second

// advanceTo moves the clock forward to at, a schedule time, as time would
// pass for the controller: from one requeue it asked for to the next.
// It fails the test unless the controller asks for one exactly at at,
// after any before it. The clock stays where it is when it is at or past
// at already.
func (w *world) advanceTo(at time.Time) {
	w.T.Helper()
	w.Eventually(fmt.Sprintf("the controller to ask for a pass at %v", at), func() (bool, error) {
		now := w.clock.Now()
		if !now.Before(at) {
			return true, nil
		}
		next, ok := w.clock.nextRequeue()
		switch {
		case !ok:
			return false, fmt.Errorf("no requeue pending; the clock is at %v", now)
		case next.After(at):
			return false, fmt.Errorf("the controller asked to be requeued at %v, %v after the schedule time", next, next.Sub(at))
		}
		w.clock.SetTime(next)
		return next.Equal(at), nil
	})
}

// followRetry moves the clock to the controller's next requeue if that is
// no more than retryWindow after since: the retry of a pass that failed.
func (w *world) followRetry(since time.Time) {
	w.T.Helper()
	if next, ok := w.clock.nextRequeue(); ok && !next.After(since.Add(retryWindow)) {
		w.T.Logf("following the controller's requeue to %v, %v after %v", next, next.Sub(since), since)
		w.clock.SetTime(next)
	}
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

// waitScheduled moves the clock to at (advanceTo: the controller must have
// asked for a pass then) and waits until the RayCronJob's lastScheduleTime
// is at: the pass that dealt with that time has written its status.
func (w *world) waitScheduled(name string, at time.Time) *rayv1.RayCronJob {
	w.T.Helper()
	w.advanceTo(at)
	since := w.clock.Now()
	var cj *rayv1.RayCronJob
	w.Eventually(fmt.Sprintf("lastScheduleTime %v", at), func() (bool, error) {
		cj = w.cronJob(name)
		last := cj.Status.LastScheduleTime
		if last != nil && last.Time.Equal(at) {
			return true, nil
		}
		w.followRetry(since)
		return false, fmt.Errorf("lastScheduleTime %v", last)
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
