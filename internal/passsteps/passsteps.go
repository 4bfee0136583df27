// Package passsteps runs one reconcile pass as a list of named steps, in
// order, over the pass's scope, as cluster-api's reconcilers do. A step
// returns a Result (end the pass here, look again within some time) and an
// error. The runner treats every controller alike: each step logs with its
// name, a failing step is logged and its error names the step, and the
// steps' results are merged into the pass's.
package passsteps

import (
	"context"
	"errors"
	"time"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

// Result is what a step (or a pass) asks of the runner besides an error.
// The zero Result goes on with the next step and asks for no requeue.
type Result struct {
	// Stop ends the pass after this step without an error: the object is
	// waiting for something, or there is nothing more to do this pass.
	Stop bool
	// RequeueAfter asks for another pass within this time; zero asks for
	// none.
	RequeueAfter time.Duration
}

// Requeue is the Result of a step that goes on and asks for another pass
// within d.
func Requeue(d time.Duration) Result { return Result{RequeueAfter: d} }

// Merge combines two results of one pass: it stops when either stops, and
// asks to be looked at again at the sooner of their requeues.
func (r Result) Merge(o Result) Result {
	return Result{Stop: r.Stop || o.Stop, RequeueAfter: Sooner(r.RequeueAfter, o.RequeueAfter)}
}

// Sooner is the shorter of two requeue intervals, where zero means none.
func Sooner(a, b time.Duration) time.Duration {
	switch {
	case a <= 0:
		return max(b, 0)
	case b <= 0:
		return a
	}
	return min(a, b)
}

// Step is one named stage of a pass over a scope of type S.
type Step[S any] struct {
	// Name names the step in logs and errors.
	Name string
	// Run does the step's work on the pass's scope.
	Run func(ctx context.Context, s S) (Result, error)
}

// Error is a step's failure, named by the step: "Name: error". Errors.Is
// and errors.As see the step's own error through it.
type Error struct {
	// Step is the name of the step that failed.
	Step string
	// Err is what the step returned.
	Err error
}

func (e *Error) Error() string { return e.Step + ": " + e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Cause is the error a step returned, without the runner's step name; any
// other error is returned as it is. Status messages show it, so that they
// do not depend on how the controller names its steps.
func Cause(err error) error {
	var stepErr *Error
	if errors.As(err, &stepErr) {
		return stepErr.Err
	}
	return err
}

// Run runs steps over s in order until one fails or stops the pass, and
// returns the merged results of the steps that ran. Each step gets a logger
// carrying "step", Name in its context; its start is logged at V(1) and its
// failure as an error, which is returned as an *Error. The result of a
// failing step is dropped: controller-runtime ignores it with an error.
func Run[S any](ctx context.Context, steps []Step[S], s S) (Result, error) {
	log := ctrllog.FromContext(ctx)
	var pass Result
	for _, st := range steps {
		res, err := runStep(ctx, log.WithValues("step", st.Name), st, s)
		if err != nil {
			return Result{}, &Error{Step: st.Name, Err: err}
		}
		pass = pass.Merge(res)
		if res.Stop {
			break
		}
	}
	return pass, nil
}

// runStep runs one step with log, the step's own logger, in its context,
// and logs its start and its failure.
func runStep[S any](ctx context.Context, log logr.Logger, st Step[S], s S) (Result, error) {
	log.V(1).Info("Reconciling")
	res, err := st.Run(logr.NewContext(ctx, log), s)
	if err != nil {
		log.Error(err, "Reconcile step failed")
	}
	return res, err
}
