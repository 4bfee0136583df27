package testenv

import (
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// Operator is the operator under test: the controllers that setup adds to
// a manager (NewManager) on an environment, running in the background. A
// test can stop it and start it again, with new caches and nothing
// remembered, as a crashed and rescheduled operator Pod would be.
type Operator struct {
	t     testing.TB
	env   *Env
	cache cache.Options
	setup func(manager.Manager) error
	run   Runner
}

// StartOperator starts an Operator whose manager's cache is scoped by
// cacheOpts, and stops it when the test ends. setup runs on every start;
// it registers the controllers, reading their options then.
func StartOperator(t testing.TB, env *Env, cacheOpts cache.Options, setup func(manager.Manager) error) *Operator {
	t.Helper()
	o := &Operator{t: t, env: env, cache: cacheOpts, setup: setup}
	o.Start()
	t.Cleanup(o.Stop)
	return o
}

// Start starts a new manager with the controllers.
func (o *Operator) Start() {
	o.t.Helper()
	mgr := NewManager(o.t, o.env, o.cache)
	if err := o.setup(mgr); err != nil {
		o.t.Fatal(err)
	}
	o.run.Start(mgr)
}

// Stop stops the running manager, if any, and waits for it to end.
func (o *Operator) Stop() { o.run.Stop() }

// Restart stops the operator and starts a new one.
func (o *Operator) Restart() {
	o.t.Helper()
	o.Stop()
	o.Start()
}
