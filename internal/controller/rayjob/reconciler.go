// Package rayjob reconciles RayJob objects: it creates (or selects) the
// RayCluster a job runs on, submits the entrypoint in the requested
// submission mode, follows the Ray job through the dashboard, retries,
// suspends and finally cleans up according to the deletion policies.
//
// The lifecycle is a state machine over status.jobDeploymentStatus. Each
// state has one handler (see states.go); Reconcile only loads the object,
// handles deletion and validation, runs the handler of the current state and
// writes the status once.
package rayjob

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"

	configv1alpha1 "github.com/ray-operator/ray-operator/api/config/v1alpha1"
	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/batchscheduler"
	"github.com/ray-operator/ray-operator/internal/cachelag"
	"github.com/ray-operator/ray-operator/internal/clusterowner"
	"github.com/ray-operator/ray-operator/internal/dashboard"
	"github.com/ray-operator/ray-operator/internal/eventrecord"
	"github.com/ray-operator/ray-operator/internal/features"
	"github.com/ray-operator/ray-operator/internal/managerdeps"
	"github.com/ray-operator/ray-operator/internal/passsteps"
	"github.com/ray-operator/ray-operator/internal/prologue"
	"github.com/ray-operator/ray-operator/internal/validation"
)

// defaultRequeue is how often a RayJob in a non-final state is looked at
// again even without a watch event: the dashboard is polled, not watched.
// A pass that finds no answer in the job info cache (AsyncJobInfoQuery)
// looks again after it too.
const defaultRequeue = 3 * time.Second

// RequeueInterval is defaultRequeue, for tests that must give the
// controller time for a second look (the RayJob chaos suite's kills).
const RequeueInterval = defaultRequeue

// ExecutionObserver records the kuberay_job_execution_duration_seconds metric
// and forgets the metrics of deleted RayJobs. internal/metrics implements it.
type ExecutionObserver interface {
	// ObserveRayJobExecutionDuration records how long an attempt took to
	// reach status (a final state or Retrying) after retryCount retries.
	ObserveRayJobExecutionDuration(name, namespace string, status rayv1.JobDeploymentStatus, retryCount int, seconds float64)
	// DeleteRayJobMetrics forgets every series of a RayJob.
	DeleteRayJobMetrics(name, namespace string)
}

// Options are the operator settings the RayJob controller depends on. They
// are read once at start-up (flags, environment knobs, feature gates).
type Options struct {
	// TransitionGracePeriod is how long a RayJob may stay Running after its
	// Ray job ended (RAYJOB_DEPLOYMENT_STATUS_TRANSITION_GRACE_PERIOD_SECONDS).
	TransitionGracePeriod time.Duration
	// StatusCheckTimeout is how long the dashboard of a Running RayJob may
	// keep failing before the RayJob fails (RAYJOB_STATUS_CHECK_TIMEOUT_SECONDS).
	// Zero means KubeRay's default, 300 s.
	StatusCheckTimeout time.Duration
	// DeleteRayJobAfterJobFinishes makes shutdownAfterJobFinishes delete the
	// RayJob itself (DELETE_RAYJOB_CR_AFTER_JOB_FINISHES).
	DeleteRayJobAfterJobFinishes bool
	// Features are the feature gates (RayJobDeletionPolicy, and those the
	// embedded RayClusterSpec is validated with). Nil means all off.
	Features validation.FeatureGates
	// ClusterDomain is the cluster DNS domain of the dashboard URL.
	ClusterDomain string
	// HeadServiceClusterIP makes the RayJob's head Service a ClusterIP
	// Service instead of a headless one (ENABLE_RAY_HEAD_CLUSTER_IP_SERVICE).
	HeadServiceClusterIP bool
	// BatchScheduler is the batch scheduler plugin (--batch-scheduler), nil
	// for none: it prepares Initializing RayJobs, decorates their cluster and
	// submitter, and releases its reservation when a RayJob finishes, is
	// suspended or is retried.
	BatchScheduler batchscheduler.Scheduler
}

// Deps are the collaborators of the controller. Tests replace the clock and
// the dashboard provider.
type Deps struct {
	// Core are the client (its scheme sets the owner references of
	// submitter Jobs), live reader, recorder and clock. Secrets are read
	// through the live reader: the manager caches only the Secrets the
	// operator labels, and authOptions.secretName names a user's Secret
	// without that label. Suspending and Retrying also confirm through it
	// that the attempt's cluster and submitter Job are gone.
	managerdeps.Core
	// Dashboards gives a dashboard client for a cluster's dashboard URL.
	Dashboards dashboard.ClientProvider
	// KubeProxy, when set (--use-kubernetes-proxy), routes dashboard calls
	// through the API server; Dashboards must then be built on its Clients.
	KubeProxy *dashboard.KubeProxy
	// Metrics may be nil when the operator's metrics are off.
	Metrics ExecutionObserver
}

// Reconciler reconciles RayJobs.
type Reconciler struct {
	Deps
	opts       Options
	events     eventrecord.Recorder
	handlers   map[rayv1.JobDeploymentStatus]stateHandler
	clusters   clusterowner.Clusters
	dashboards dashboard.Access
	// dashFailures holds the dashboard back-off of Running RayJobs.
	dashFailures dashboard.Backoff
	// ownWrites holds the RayJob versions the controller's writes replaced
	// and the cache may still show.
	ownWrites cachelag.OwnWrites
}

// New returns a Reconciler. A nil Clock means the real clock.
func New(deps Deps, opts Options) *Reconciler {
	deps.Core = deps.Defaulted()
	if opts.TransitionGracePeriod == 0 {
		opts.TransitionGracePeriod = 300 * time.Second
	}
	if opts.StatusCheckTimeout <= 0 {
		opts.StatusCheckTimeout = configv1alpha1.DefaultRayJobStatusCheckTimeout
	}
	if opts.Features == nil {
		opts.Features = validation.NoFeatureGates{}
	}
	r := &Reconciler{Deps: deps, opts: opts, events: deps.Events(),
		clusters:   clusterowner.Clusters{Client: deps.Client, Events: deps.Events(), Live: deps.LiveReader},
		dashboards: dashboard.Access{Secrets: deps.LiveReader, Clients: deps.Dashboards, ClusterDomain: opts.ClusterDomain, Proxy: deps.KubeProxy},
	}
	r.handlers = r.stateHandlers()
	return r
}

// +kubebuilder:rbac:groups=ray.io,resources=rayjobs,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=ray.io,resources=rayjobs/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=ray.io,resources=rayjobs/finalizers,verbs=update
// +kubebuilder:rbac:groups=ray.io,resources=rayclusters,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=core,resources=services,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=core,resources=pods,verbs=get;list;watch
// +kubebuilder:rbac:groups=core,resources=secrets,verbs=get;list;watch
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch;update

// Reconcile moves one RayJob one step through its lifecycle.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return prologue.Run(ctx, req.NamespacedName, &rayv1.RayJob{}, r.prologueKind(), r.pass)
}

// prologueKind: a RayJob the cache shows as it was before this
// controller's own last write is skipped (cachelag): the pass would redo
// that write and fail with a conflict.
func (r *Reconciler) prologueKind() prologue.Kind[*rayv1.RayJob] {
	return prologue.Kind[*rayv1.RayJob]{
		Name: rayv1.KindRayJob, Read: prologue.FromCache(r.Client),
		Forget: func(key types.NamespacedName) {
			r.forgetMetrics(key.Name, key.Namespace)
			r.dashFailures.ForgetObject(key)
			r.ownWrites.Forget(key)
		},
		Behind:    func(job *rayv1.RayJob) bool { return r.ownWrites.Behind(job) },
		ManagedBy: func(job *rayv1.RayJob) *string { return job.Spec.ManagedBy },
		Finalize:  r.finalize,
		Validate:  func(job *rayv1.RayJob) error { return validateRayJob(job, r.opts.Features) },
		Invalid:   r.failValidation,
	}
}

// pass runs the steps of the RayJob's deployment status.
func (r *Reconciler) pass(ctx context.Context, job, _ *rayv1.RayJob) (ctrl.Result, error) {
	s := newScope(job)
	ctx = ctrl.LoggerInto(ctx, ctrl.LoggerFrom(ctx).WithValues("jobDeploymentStatus", job.Status.JobDeploymentStatus))
	res, err := passsteps.Run(ctx, r.stepsFor(job.Status.JobDeploymentStatus), s)
	return r.finishPass(ctx, s, res, err)
}

// forgetMetrics drops the metrics of a RayJob that no longer exists.
func (r *Reconciler) forgetMetrics(name, namespace string) {
	if r.Metrics != nil {
		r.Metrics.DeleteRayJobMetrics(name, namespace)
	}
}

// deletionPolicyEnabled reports the RayJobDeletionPolicy feature gate.
func (r *Reconciler) deletionPolicyEnabled() bool {
	return r.opts.Features.Enabled(features.RayJobDeletionPolicy)
}

// sidecarRestartEnabled reports the SidecarSubmitterRestart feature gate.
func (r *Reconciler) sidecarRestartEnabled() bool {
	return r.opts.Features.Enabled(features.SidecarSubmitterRestart)
}

// now is the current time of the injected clock.
func (r *Reconciler) now() time.Time {
	return r.Clock.Now()
}
