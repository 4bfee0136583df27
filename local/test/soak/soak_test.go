package soak_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ray-operator/ray-operator/local/internal/e2eutil"
)

// teardownTimeout bounds the deletion of the soak's namespace and the wait
// for the node to give everything back.
const teardownTimeout = 5 * time.Minute

// TestSoak cycles RayJobs and RayService upgrades for SOAK_DURATION and
// fails on a RayJob that ends wrong, a failed upgrade, operator RSS or
// goroutines that are not flat (analysis_test.go), or anything left after
// the namespace is deleted; it writes its figures to .cache/soak/<time>/.
func TestSoak(t *testing.T) {
	if os.Getenv(durationEnv) == "" {
		t.Skipf("%s is not set; `make soak` sets it", durationEnv)
	}
	cfg, err := configFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	e := startEnv(t)
	ctx := t.Context()
	base, err := e.inventory(ctx)
	if err != nil {
		t.Fatalf("inventory before the first cycle: %v", err)
	}
	sampleCtx, stopSampling := context.WithCancel(ctx)
	smp := newSampler(e.operator.Pid(), e.metricsURL)
	go smp.run(sampleCtx, sampleEvery)

	r := &result{planned: cfg.duration}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "soak"}}
	if err := e.client.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	w := &workload{c: e.client, ns: ns.Name}
	began := time.Now()
	if err := w.startService(ctx); err != nil {
		r.upgradeErrs = append(r.upgradeErrs, "starting the RayService: "+err.Error())
	} else {
		e.cycle(ctx, t, cfg, w, r)
	}
	r.ran = time.Since(began)
	stopSampling()
	r.samples, r.sampleErrs, _ = smp.taken()
	r.flat = flatnessOf(r.samples)
	e.teardown(t, base, r)
	smp.take(ctx, time.Since(began))
	if after, _, _ := smp.taken(); len(after) > len(r.samples) && len(r.samples) > 0 {
		r.idleBefore, r.idleAfter = r.samples[0], after[len(after)-1]
	}
	e.report(t, r)
}

// cycle runs cycles of two RayJobs until the duration is over, with an
// upgrade whenever upgradeEvery has passed since the last one; it stops
// early at the first problem (the report then says what).
func (e *env) cycle(ctx context.Context, t *testing.T, cfg config, w *workload, r *result) {
	deadline := time.Now().Add(cfg.duration)
	lastUpgrade := time.Now()
	for i := 0; time.Now().Before(deadline); i++ {
		outcomes := w.runCycle(ctx, i)
		r.cycles++
		r.outcomes = append(r.outcomes, outcomes...)
		for _, o := range outcomes {
			t.Logf("cycle %d: %v", i, o)
			if !o.right() {
				return
			}
		}
		if err := e.operator.ExitedByItself(); err != nil {
			r.upgradeErrs = append(r.upgradeErrs, err.Error())
			return
		}
		if time.Since(lastUpgrade) < cfg.upgradeEvery || !time.Now().Before(deadline) {
			continue
		}
		began := time.Now()
		if err := w.upgrade(ctx); err != nil {
			r.upgradeErrs = append(r.upgradeErrs, "upgrade to "+w.versionName()+": "+err.Error())
			return
		}
		r.upgrades++
		r.upgradeTimes = append(r.upgradeTimes, time.Since(began))
		lastUpgrade = time.Now()
		t.Logf("upgrade to %s in %v", w.versionName(), time.Since(began).Round(time.Second))
	}
}

// teardown deletes the soak's namespace and waits until the cluster holds
// no more than before the first cycle.
func (e *env) teardown(t *testing.T, base inventory, r *result) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(t.Context()), teardownTimeout)
	defer cancel()
	if err := e2eutil.DeleteNamespace(ctx, e.client, "soak"); err != nil {
		r.leakCheckError = err
		return
	}
	r.leaks, r.leakCheckError = e.waitNoLeaks(ctx, base)
}

// report writes the figures and fails t on every problem.
func (e *env) report(t *testing.T, r *result) {
	dir := filepath.Join(e.root, ".cache", "soak", time.Now().UTC().Format("20060102-150405"))
	if err := r.write(dir); err != nil {
		t.Errorf("writing the report: %v", err)
	}
	summary, _ := os.ReadFile(filepath.Join(dir, "summary.md"))
	t.Logf("report in %s:\n%s", dir, summary)
	for _, p := range r.problems() {
		t.Error(p)
	}
}
