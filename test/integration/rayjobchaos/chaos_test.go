// Package rayjobchaos_test runs many RayJob lifecycles against a real
// kube-apiserver (envtest) while the operator, started in process, is
// killed at random moments, and checks the promises the operator makes
// under faults: every RayJob reaches the terminal state its script
// dictates, no RayJob has two clusters at once or one cluster name twice,
// no Ray job is submitted twice, every finalizer is removed, and a killed
// operator leaves no goroutine behind.
//
// A run is drawn from a seed (RAY_OPERATOR_CHAOS_SEED, random by default):
// the lifecycles (RAY_OPERATOR_CHAOS_LIFECYCLES, 100 by default; their
// submission modes, retries, deadlines, suspensions, deletion rules and the
// scripts of their Ray jobs), the moments the operator is killed, and the
// dashboard faults. The interleaving with the API server is real time and
// is not replayed: a seed replays the same plan, which usually, not always,
// reproduces a failure. A failing run prints the command that re-runs its
// seed.
package rayjobchaos_test

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	mathrand "math/rand/v2"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/testing/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// The environment variables of a run.
const (
	seedEnv       = "RAY_OPERATOR_CHAOS_SEED"
	lifecyclesEnv = "RAY_OPERATOR_CHAOS_LIFECYCLES"
	parallelEnv   = "RAY_OPERATOR_CHAOS_PARALLEL"
)

// settings are a run's seed and size.
type settings struct {
	seed       uint64
	lifecycles int
	// parallel is how many lifecycles run at once.
	parallel int
}

// settingsFromEnv reads the settings; an unset seed is drawn at random.
func settingsFromEnv(t *testing.T) settings {
	t.Helper()
	s := settings{lifecycles: 100, parallel: 20}
	var buf [8]byte
	_, _ = rand.Read(buf[:])
	s.seed = binary.LittleEndian.Uint64(buf[:]) >> 1
	for env, dst := range map[string]*int{lifecyclesEnv: &s.lifecycles, parallelEnv: &s.parallel} {
		if v := os.Getenv(env); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				t.Fatalf("%s=%q: want a positive integer", env, v)
			}
			*dst = n
		}
	}
	if v := os.Getenv(seedEnv); v != "" {
		seed, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("%s=%q: want an unsigned integer", seedEnv, v)
		}
		s.seed = seed
	}
	return s
}

// rerun is the command that runs this seed again.
func (s settings) rerun() string {
	return fmt.Sprintf(`%s=%d %s=%d %s=%d RAY_OPERATOR_K8S_BIN="$(hack/k8s-binaries.sh)" go test -count=1 -p 1 -timeout 60m -run '^TestRayJobChaos$' -v ./test/integration/rayjobchaos/`,
		seedEnv, s.seed, lifecyclesEnv, s.lifecycles, parallelEnv, s.parallel)
}

// TestRayJobChaos plays the seed's lifecycles against an operator killed
// at random moments and dashboards that fail at random moments, then
// checks the invariants.
func TestRayJobChaos(t *testing.T) {
	s := settingsFromEnv(t)
	// Odd seeds play the job info cache (AsyncJobInfoQuery), even seeds the
	// direct dashboard requests: make test's random seeds cover both.
	asyncJobInfo := s.seed%2 == 1
	t.Logf("seed %d: %d lifecycles, %d at a time, AsyncJobInfoQuery %t", s.seed, s.lifecycles, s.parallel, asyncJobInfo)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("re-run this seed with:\n  %s", s.rerun())
		}
	})
	env := testenv.Shared(t)
	ns := env.Namespace(t)
	began := time.Now()
	// Everything the run starts from here must be gone at its end.
	baseline := goleak.IgnoreCurrent()

	faults := &violations{}
	dash, err := newDashboards(t.Context(), ns)
	if err != nil {
		t.Fatal(err)
	}
	w, err := newWorld(env, ns, dash, faults)
	if err != nil {
		t.Fatal(err)
	}
	weatherCtx, stopWeather := context.WithCancel(context.Background())
	weatherDone := make(chan struct{})
	go func() {
		defer close(weatherDone)
		dash.runWeather(weatherCtx, mathrand.New(mathrand.NewPCG(s.seed, 1<<40)))
	}()
	op := startOperator(env, ns, dash, mathrand.New(mathrand.NewPCG(s.seed, 1<<41)), asyncJobInfo)

	lifecycles := make([]*lifecycle, s.lifecycles)
	for i := range lifecycles {
		lifecycles[i] = newLifecycle(s.seed, i)
	}
	runLifecycles(w, lifecycles, s.parallel, faults)

	stopWeather()
	<-weatherDone
	kills, opErr := op.finish()
	if opErr != nil {
		t.Errorf("the operator could not start: %v", opErr)
	}
	checkLeftovers(w, faults)
	checkLedger(w, faults)
	w.stop()
	checkGoroutines(t, baseline)

	report(t, s, lifecycles, kills, dash, w, time.Since(began))
	reportViolations(t, faults.all(), lifecycles, w.rec)
}

// reportViolations fails the test with each violation, followed once per
// lifecycle by its plan and status history when the violation does not
// carry them (those found by the watches and the final checks).
func reportViolations(t *testing.T, found []violation, lifecycles []*lifecycle, rec *recorder) {
	t.Helper()
	plans := map[string]*lifecycle{}
	for _, lc := range lifecycles {
		plans[lc.name] = lc
	}
	detailed := map[string]bool{}
	for _, v := range found {
		if strings.Contains(v.what, "RayJob statuses:") {
			detailed[v.lifecycle] = true
		}
	}
	for _, v := range found {
		t.Errorf("%s: %s", v.lifecycle, v.what)
		if lc := plans[v.lifecycle]; lc != nil && !detailed[v.lifecycle] {
			detailed[v.lifecycle] = true
			t.Logf("%v\nRayJob statuses:\n%s", lc, rec.history(lc.name))
		}
	}
}

// runLifecycles plays every lifecycle, parallel at a time.
func runLifecycles(w *world, lifecycles []*lifecycle, parallel int, faults *violations) {
	slots := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	for _, lc := range lifecycles {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			a := &actor{w: w, lc: lc, ctx: w.ctx}
			if err := a.run(); err != nil {
				faults.add(lc.name, "%v\n%s", err, a.report())
				a.cleanUp(faults)
			}
		})
	}
	wg.Wait()
}

// cleanUp deletes the RayJob of a failed lifecycle, so that the run goes
// on, and reports a finalizer that is never removed.
func (a *actor) cleanUp(faults *violations) {
	if err := a.w.c.Delete(a.ctx, a.key()); client.IgnoreNotFound(err) != nil {
		faults.add(a.lc.name, "deleting the RayJob: %v", err)
		return
	}
	if err := a.awaitGone(); err != nil {
		faults.add(a.lc.name, "finalizer never removed: %v", err)
	}
}

// checkGoroutines fails the test when goroutines started during the run
// outlive it: every operator, watch and stand-in has been stopped.
func checkGoroutines(t *testing.T, baseline goleak.Option) {
	t.Helper()
	var leaked error
	err := wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		leaked = goleak.Find(baseline)
		return leaked == nil, nil
	})
	if err != nil {
		t.Errorf("goroutines left after the operator stopped:\n%v", leaked)
	}
}

// report logs the run's figures.
func report(t *testing.T, s settings, lifecycles []*lifecycle, kills []kill, dash *dashboards, w *world, took time.Duration) {
	t.Helper()
	count := map[string]int{}
	for _, lc := range lifecycles {
		count[string(lc.mode)]++
		count["attempts"] += len(lc.attempts)
		for _, key := range []struct {
			on   bool
			name string
		}{
			{lc.deadline != nil, "deadline"}, {lc.suspend != noSuspension, "suspended"}, {lc.vanish, "vanishing job"},
			{lc.deleteEarly, "deleted early"}, {lc.shutdown, "shutdownAfterJobFinishes"}, {lc.rules != nil, "deletionRules"},
			{lc.backoffLimit != nil && *lc.backoffLimit > 0, "backoffLimit>0"},
		} {
			if key.on {
				count[key.name]++
			}
		}
	}
	causes := map[string]int{}
	var lived time.Duration
	for _, k := range kills {
		causes[strings.SplitN(k.cause, " #", 2)[0]]++
		lived += k.lived
	}
	clusters := 0
	for _, jr := range w.rec.snapshot() {
		clusters += len(jr.created)
	}
	dash.mu.Lock()
	started := map[string]int{}
	for _, sub := range dash.started {
		started[sub.by]++
	}
	windows, inUse, lost := dash.windows, len(dash.inUse), dash.lost
	dash.mu.Unlock()
	t.Logf("seed %d: %d lifecycles in %v (%s)", s.seed, len(lifecycles), took.Round(time.Second), mapString(count))
	t.Logf("operator killed %d times (%s), an incarnation lived %v on average",
		len(kills), mapString(causes), (lived / time.Duration(max(1, len(kills)))).Round(time.Millisecond))
	t.Logf("%d RayClusters created; Ray jobs started by %s; %d dashboard fault windows; %d submissions landed with their answer lost; %d refused as already known",
		clusters, mapString(started), windows, lost, inUse)
}

// mapString prints a map sorted by key.
func mapString(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

// checkLeftovers: no RayJob is left in the namespace (every finalizer was
// removed).
func checkLeftovers(w *world, faults *violations) {
	list := &rayv1.RayJobList{}
	if err := w.c.List(context.Background(), list, client.InNamespace(w.ns)); err != nil {
		faults.add("", "listing RayJobs: %v", err)
		return
	}
	for _, job := range list.Items {
		faults.add(job.Name, "RayJob left at the end, finalizers %v, deletion %v", job.Finalizers, job.DeletionTimestamp)
	}
}
