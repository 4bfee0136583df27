package testenv

import (
	"testing"
	"time"

	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/ray-operator/ray-operator/internal/clusterindex"
)

// pollInterval is how often Eventually and Consistently look again.
const pollInterval = 100 * time.Millisecond

// Eventually polls cond until it holds or timeout passes, and fails the
// test with what and the last error then.
func Eventually(t testing.TB, what string, timeout time.Duration, cond func() (bool, error)) {
	t.Helper()
	var lastErr error
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(pollInterval) {
		ok, err := cond()
		if ok {
			return
		}
		lastErr = err
	}
	t.Fatalf("timed out waiting for %s (last: %v)", what, lastErr)
}

// Consistently polls cond for d and fails as soon as it does not hold.
func Consistently(t testing.TB, what string, d time.Duration, cond func() (bool, error)) {
	t.Helper()
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(pollInterval) {
		if ok, err := cond(); !ok {
			t.Fatalf("%s stopped holding (%v)", what, err)
		}
	}
}

// NewManager returns a manager on env for one test's controllers, with
// ManagerOptions.
func NewManager(t testing.TB, env *Env, cacheOpts cache.Options) manager.Manager {
	t.Helper()
	opts := ManagerOptions(env, cacheOpts)
	opts.Logger = newFailureLog(t)
	mgr, err := ctrl.NewManager(env.Config, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := clusterindex.Register(t.Context(), mgr.GetFieldIndexer()); err != nil {
		t.Fatal(err)
	}
	return mgr
}

// ManagerOptions are the options of a test's manager on env: env's scheme,
// no metrics server, controller names that may repeat across tests (every
// manager of the process registers the same ones), and the cache scoped by
// cacheOpts (the operator's operator.CacheOptions(ns), say). A test that
// needs more changes them and calls ctrl.NewManager itself.
func ManagerOptions(env *Env, cacheOpts cache.Options) manager.Options {
	return manager.Options{
		Scheme:     env.Scheme,
		Metrics:    metricsserver.Options{BindAddress: "0"},
		Cache:      cacheOpts,
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	}
}
