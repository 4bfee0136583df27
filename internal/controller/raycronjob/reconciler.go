// Package raycronjob reconciles RayCronJob objects: at every time of a cron
// schedule it creates a RayJob from the jobTemplate, as KubeRay does, and
// adds what batch/v1 CronJob users expect: a concurrency policy, a starting
// deadline, history limits, status.active and status.lastSuccessfulTime.
//
// Reconcile only loads the object and runs the ordered steps of steps.go
// (observe the owned RayJobs, validate, prune the history, suspend, run
// the schedule), then writes the status once when it changed and asks for
// a pass at the next schedule time. Everything a pass decides is derived
// from the API server's current state (the RayCronJob and its RayJobs are
// read live, not from the cache) and from the deterministic RayJob names,
// so a stale view or an operator restart never creates a RayJob twice.
package raycronjob

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/eventrecord"
	"github.com/ray-operator/ray-operator/internal/managerdeps"
	"github.com/ray-operator/ray-operator/internal/passsteps"
	"github.com/ray-operator/ray-operator/internal/prologue"
	"github.com/ray-operator/ray-operator/internal/validation"
)

const (
	// errorRequeue is how soon a pass that failed (an API error) is retried,
	// as KubeRay.
	errorRequeue = 3 * time.Second
	// minRequeue is the shortest requeue: a schedule time that is already
	// due when the pass ends (a very frequent schedule) is looked at again
	// without delay, but never in a hot loop.
	minRequeue = time.Second
)

// Metrics records the RayCronJob metrics the controller feeds.
// internal/metrics implements it.
type Metrics interface {
	// ObserveRayJobCreation counts one attempt to create a RayJob of a
	// RayCronJob; outcome is "created", "already_exists" or "failed".
	ObserveRayJobCreation(name, namespace, outcome string)
	// DeleteRayCronJobMetrics forgets every series of a RayCronJob.
	DeleteRayCronJobMetrics(name, namespace string)
}

// Options are the operator settings the controller depends on, read once
// at start-up.
type Options struct {
	// Features are the feature gates the jobTemplate is validated with (as
	// a RayJob spec). Nil means every gate off.
	Features validation.FeatureGates
}

// Deps are the controller's collaborators; tests replace them.
type Deps struct {
	// Core are the client, live reader, recorder and clock. The
	// RayCronJob and its RayJobs are read through the live reader; the
	// clock is the time source of the schedule and of the controller's
	// work queue (a requeue for the next schedule time waits on it).
	managerdeps.Core
	// Metrics may be nil when the operator's metrics are off.
	Metrics Metrics
}

// Reconciler reconciles RayCronJobs.
type Reconciler struct {
	Deps
	opts   Options
	events eventrecord.Recorder
}

// New returns a Reconciler, filling in the defaults of Deps and Options.
func New(deps Deps, opts Options) *Reconciler {
	deps.Core = deps.Defaulted()
	if opts.Features == nil {
		opts.Features = validation.NoFeatureGates{}
	}
	return &Reconciler{Deps: deps, opts: opts, events: deps.Events()}
}

// +kubebuilder:rbac:groups=ray.io,resources=raycronjobs,verbs=get;list;watch
// +kubebuilder:rbac:groups=ray.io,resources=raycronjobs/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=ray.io,resources=raycronjobs/finalizers,verbs=update
// +kubebuilder:rbac:groups=ray.io,resources=rayjobs,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch;update

// Reconcile deals with the schedule times of one RayCronJob that are due.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return prologue.Run(ctx, req.NamespacedName, &rayv1.RayCronJob{}, r.prologueKind(), r.pass)
}

// prologueKind: a RayCronJob is read Live, from the API server, so that a
// schedule time its last status write recorded is never taken again from a
// stale copy (a RayJob created twice); a failed read retries after
// errorRequeue, as the schedule does. It has no spec.managedBy, and nothing to finalize: its RayJobs go
// with it through their owner references.
func (r *Reconciler) prologueKind() prologue.Kind[*rayv1.RayCronJob] {
	return prologue.Kind[*rayv1.RayCronJob]{
		Name: rayv1.KindRayCronJob, Read: prologue.Live(r.LiveReader),
		Forget:     func(key types.NamespacedName) { r.forgetMetrics(key.Name, key.Namespace) },
		ReadFailed: r.failed,
	}
}

// pass runs the steps (validation is the first).
func (r *Reconciler) pass(ctx context.Context, cj, _ *rayv1.RayCronJob) (ctrl.Result, error) {
	s := newScope(cj, r.Clock.Now())
	res, err := passsteps.Run(ctx, r.orderedSteps(), s)
	return r.finishPass(ctx, s, res, err)
}

// forgetMetrics drops the metrics of a RayCronJob that no longer exists.
func (r *Reconciler) forgetMetrics(name, namespace string) {
	if r.Metrics != nil {
		r.Metrics.DeleteRayCronJobMetrics(name, namespace)
	}
}

// failed logs err and retries after errorRequeue. The error is not
// returned: controller-runtime would then ignore the requeue time and back
// off on its own.
func (r *Reconciler) failed(ctx context.Context, err error) (ctrl.Result, error) {
	ctrl.LoggerFrom(ctx).Error(err, "RayCronJob pass failed; retrying", "after", errorRequeue)
	return ctrl.Result{RequeueAfter: errorRequeue}, nil
}
