// Package passsteps runs one reconcile pass as a list of named steps, in
// order, over the pass's scope. The RayCluster, RayService and RayCronJob
// controllers each list their steps and run them with a Runner; what differs
// between them is a Runner option: a logger per step, the step's name on
// its error, and a step that ends the pass early.
package passsteps

import (
	"context"
	"fmt"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

// Step is one named stage of a pass over a scope of type S.
type Step[S any] struct {
	// Name names the step in logs and errors.
	Name string
	// Run does the step's work on the pass's scope.
	Run func(ctx context.Context, s S) error
}

// Runner runs steps in order; the first error ends the pass and is
// returned. Its zero value runs every step, logs nothing and returns the
// error as the step returned it.
type Runner[S any] struct {
	// LogSteps gives each step a logger carrying "step", Name in its
	// context, logs "Reconciling" at V(1) before the step and "Reconcile
	// step failed" when it fails.
	LogSteps bool
	// WrapErrors returns a step's error as "Name: error", still matched by
	// errors.Is and errors.As.
	WrapErrors bool
	// Stop, when not nil, is asked after each step that succeeded: true
	// ends the pass without an error.
	Stop func(s S) bool
}

// Run runs steps over s in order. It stops at the first error or once Stop
// says so.
func (r Runner[S]) Run(ctx context.Context, steps []Step[S], s S) error {
	var log logr.Logger
	if r.LogSteps {
		log = ctrllog.FromContext(ctx)
	}
	for _, st := range steps {
		if err := r.runStep(ctx, log, st, s); err != nil {
			return err
		}
		if r.Stop != nil && r.Stop(s) {
			return nil
		}
	}
	return nil
}

// runStep runs one step, logged with log when LogSteps is set, and names it
// on its error when WrapErrors is set.
func (r Runner[S]) runStep(ctx context.Context, log logr.Logger, st Step[S], s S) error {
	var err error
	if r.LogSteps {
		err = runLogged(ctx, log.WithValues("step", st.Name), st, s)
	} else {
		err = st.Run(ctx, s)
	}
	if err != nil && r.WrapErrors {
		return fmt.Errorf("%s: %w", st.Name, err)
	}
	return err
}

// runLogged runs a step with log, the step's own logger, in its context,
// and logs its start and its failure.
func runLogged[S any](ctx context.Context, log logr.Logger, st Step[S], s S) error {
	log.V(1).Info("Reconciling")
	err := st.Run(logr.NewContext(ctx, log), s)
	if err != nil {
		log.Error(err, "Reconcile step failed")
	}
	return err
}
