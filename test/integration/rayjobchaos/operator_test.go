package rayjobchaos_test

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"

	configv1alpha1 "github.com/ray-operator/ray-operator/api/config/v1alpha1"
	"github.com/ray-operator/ray-operator/internal/clusterindex"
	"github.com/ray-operator/ray-operator/internal/controller/rayjob"
	"github.com/ray-operator/ray-operator/internal/dashboard"
	"github.com/ray-operator/ray-operator/internal/features"
	"github.com/ray-operator/ray-operator/internal/operator"
	"github.com/ray-operator/ray-operator/internal/testing/testenv"
)

// incarnation is one run of the operator, from its start to its death.
type incarnation struct {
	n  int
	ks *testenv.KillSwitch
	// killAt is the write to the API server that kills it (0: none); it
	// dies before sending it (killBefore) or after the API server has
	// answered, before the controller learns the answer.
	killAt     int64
	killBefore bool
	writes     atomic.Int64
	dead       atomic.Bool
	cause      chan string
	run        testenv.Runner
}

// alive reports whether the incarnation may still act.
func (inc *incarnation) alive() bool { return !inc.dead.Load() }

// die stops the incarnation from acting and tells the killer why.
func (inc *incarnation) die(cause string) {
	if inc.dead.CompareAndSwap(false, true) {
		inc.cause <- cause
	}
}

// writeKiller counts the operator's writes to the API server (event
// writes aside: they are asynchronous) and kills the incarnation at the
// chosen one.
type writeKiller struct {
	next http.RoundTripper
	inc  *incarnation
}

func (k writeKiller) RoundTrip(req *http.Request) (*http.Response, error) {
	if !k.inc.alive() {
		return nil, testenv.ErrKilled
	}
	if req.Method == http.MethodGet || strings.Contains(req.URL.Path, "/events.k8s.io/") || strings.HasSuffix(req.URL.Path, "/events") {
		return k.next.RoundTrip(req)
	}
	if n := k.inc.writes.Add(1); n != k.inc.killAt {
		return k.next.RoundTrip(req)
	}
	what := fmt.Sprintf("write #%d (%s %s)", k.inc.killAt, req.Method, req.URL.Path)
	if k.inc.killBefore {
		k.inc.die("before " + what)
		return nil, testenv.ErrKilled
	}
	resp, err := k.next.RoundTrip(req)
	if err == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
	}
	k.inc.die("after " + what)
	return nil, testenv.ErrKilled
}

// kill is one death of the operator.
type kill struct {
	incarnation int
	lived       time.Duration
	cause       string
}

// chaosOperator runs the operator's RayCluster and RayJob controllers, set
// up as internal/operator sets them up, against the shared API server, and
// kills it at random moments: after a random time, or at a random write to
// the API server (before it is sent, or after it landed). A kill is hard:
// its connections are cut (testenv.KillSwitch), its dashboard clients stop
// working, and its manager's context is canceled with no graceful shutdown
// period. The next incarnation starts with a new manager, so with empty
// caches and no memory of the last one.
type chaosOperator struct {
	// asyncJobInfo turns the AsyncJobInfoQuery gate on (the job info cache
	// between the RayJob controller and the dashboards).
	asyncJobInfo bool
	env          *testenv.Env
	ns           string
	dash         *dashboards
	rng          *rand.Rand
	stop         chan struct{}
	done         chan struct{}
	mu           sync.Mutex
	// kills are the deaths so far; err is why an incarnation could not start.
	kills []kill
	err   error
}

// startOperator starts the first incarnation and the killer.
func startOperator(env *testenv.Env, ns string, dash *dashboards, rng *rand.Rand, asyncJobInfo bool) *chaosOperator {
	op := &chaosOperator{asyncJobInfo: asyncJobInfo, env: env, ns: ns, dash: dash, rng: rng, stop: make(chan struct{}), done: make(chan struct{})}
	go op.loop()
	return op
}

// loop runs incarnations one after the other until stopped.
func (op *chaosOperator) loop() {
	defer close(op.done)
	for n := 1; ; n++ {
		inc, err := op.start(n)
		if err != nil {
			op.mu.Lock()
			op.err = err
			op.mu.Unlock()
			return
		}
		began := time.Now()
		timer := time.NewTimer(op.lifetime(n))
		cause := ""
		select {
		case <-timer.C:
			cause = "after a random time"
		case cause = <-inc.cause:
		case <-op.stop:
			cause = "end of the run"
		}
		timer.Stop()
		inc.dead.Store(true)
		inc.ks.Kill()
		inc.run.Stop()
		op.mu.Lock()
		op.kills = append(op.kills, kill{incarnation: n, lived: time.Since(began), cause: cause})
		op.mu.Unlock()
		select {
		case <-op.stop:
			return
		case <-time.After(time.Duration(op.rng.Int64N(int64(restartPause)))):
		}
	}
}

// progressPeriod is how long the operator must live for the RayJob
// controller to act on an answer it asked for: a pass that finds none in the
// job info cache (AsyncJobInfoQuery: an empty cache at every start) looks
// again rayjob.RequeueInterval later, and the cache polls a job every
// dashboard.CachePollInterval. Killed sooner every time, the operator would
// never act on a Running RayJob's job info but at the submitter-finished
// timeout (30 s), and RayJobs without a submitter would wait for an
// incarnation that happened to live long enough, on end: the users' waits
// then failed on a kill schedule, not on the operator.
const progressPeriod = rayjob.RequeueInterval + dashboard.CachePollInterval

// The kill schedule: an incarnation lives shortLife to longestShortLife
// unless a write kills it first; every longLivedEvery-th lives a
// progressPeriod and up to a third more, and is killed at no write; the
// next starts up to restartPause later.
const (
	shortLife        = 300 * time.Millisecond
	longestShortLife = 4 * time.Second
	longLivedEvery   = 5
	restartPause     = 300 * time.Millisecond
)

// longestProgressGap bounds the time from the end of one long-lived
// incarnation to the end of the next: how long the schedule can keep the
// operator from acting on an answer.
const longestProgressGap = (longLivedEvery-1)*(longestShortLife+restartPause) + restartPause + progressPeriod*4/3

// lifetime draws when incarnation n is killed, unless a write kills it
// first.
func (op *chaosOperator) lifetime(n int) time.Duration {
	if n%longLivedEvery == 0 {
		return progressPeriod + time.Duration(op.rng.Int64N(int64(progressPeriod/3)))
	}
	return shortLife + time.Duration(op.rng.Int64N(int64(longestShortLife-shortLife)))
}

// start builds and starts incarnation n; but a long-lived one, it may die
// at one of its first 25 writes.
func (op *chaosOperator) start(n int) (*incarnation, error) {
	inc := &incarnation{n: n, ks: testenv.NewKillSwitch(), cause: make(chan string, 1)}
	if op.rng.IntN(3) > 0 && n%longLivedEvery != 0 {
		inc.killAt, inc.killBefore = int64(1+op.rng.IntN(25)), op.rng.IntN(2) == 0
	}
	cfg := inc.ks.Config(op.env.Config)
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper { return writeKiller{next: rt, inc: inc} }
	settings := configv1alpha1.Configuration{}
	configv1alpha1.SetDefaults(&settings)
	// As the operator's own client (operator.New): without them client-go
	// throttles to 5 requests per second.
	cfg.QPS, cfg.Burst = float32(*settings.QPS), *settings.Burst
	gate := features.NewGate()
	if err := gate.SetFromMap(map[string]bool{string(features.AsyncJobInfoQuery): op.asyncJobInfo}); err != nil {
		return nil, err
	}
	scheme, err := operator.NewScheme(gate, nil)
	if err != nil {
		return nil, err
	}
	opts := testenv.ManagerOptions(op.env, operator.CacheOptions(op.ns))
	opts.Scheme = scheme
	opts.GracefulShutdownTimeout = ptr.To(time.Duration(0))
	mgr, err := ctrl.NewManager(cfg, opts)
	if err != nil {
		return nil, err
	}
	if err := clusterindex.Register(context.Background(), mgr.GetFieldIndexer()); err != nil {
		return nil, err
	}
	deps := operator.Deps{Config: settings, Knobs: configv1alpha1.DefaultKnobs(), Features: gate,
		Clock: clock.RealClock{}, Dashboards: op.dash.provider(inc.alive)}
	for _, c := range operator.DefaultControllers() {
		if slices.Contains([]string{"RayCluster", "RayJob"}, c.Name) {
			if err := c.Setup(mgr, deps); err != nil {
				return nil, fmt.Errorf("setting up the %s controller: %w", c.Name, err)
			}
		}
	}
	inc.run.Start(mgr)
	return inc, nil
}

// finish kills the last incarnation and returns every kill.
func (op *chaosOperator) finish() ([]kill, error) {
	close(op.stop)
	<-op.done
	op.mu.Lock()
	defer op.mu.Unlock()
	return slices.Clone(op.kills), op.err
}
