// Package raycluster reconciles RayCluster objects: it creates and deletes
// the head and worker Pods and everything around them (Services, autoscaler
// RBAC, Ingress or Route, the auth Secret), runs the GCS fault tolerance
// cleanup when a cluster is deleted, and reports what it observes in the
// status.
//
// A pass is the prologue (internal/prologue): load the RayCluster; skip it
// when another controller manages it; finalize it when it is being deleted
// (gcsft_finalizer.go); validate it (validation.go). Then the ordered steps
// of steps.go, the first of which adds the GCS FT finalizer, stopping at
// the first error; then the epilogue, finishPass: compute the status from
// what is observed (status.go) and write it once when it changed.
package raycluster

import (
	"context"
	"errors"
	"io"
	"time"

	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/event"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/batchscheduler"
	"github.com/ray-operator/ray-operator/internal/dashboard"
	"github.com/ray-operator/ray-operator/internal/eventrecord"
	"github.com/ray-operator/ray-operator/internal/expectations"
	"github.com/ray-operator/ray-operator/internal/features"
	"github.com/ray-operator/ray-operator/internal/managerdeps"
	"github.com/ray-operator/ray-operator/internal/passsteps"
	"github.com/ray-operator/ray-operator/internal/prologue"
	"github.com/ray-operator/ray-operator/internal/raypod"
	"github.com/ray-operator/ray-operator/internal/validation"
)

// Requeue intervals.
const (
	// shortRequeue follows a status change, so that multi-pass operations
	// such as suspension advance without waiting for the default interval.
	shortRequeue = 2 * time.Second
	// headTerminationRequeue waits for a head Pod to terminate during
	// deletion; termination takes much longer than shortRequeue.
	headTerminationRequeue = 10 * time.Second
	// defaultRequeue is RAYCLUSTER_DEFAULT_REQUEUE_SECONDS_ENV's default.
	defaultRequeue = 300 * time.Second
	// DefaultMaxPodWritesPerPass bounds the worker Pods one pass creates or
	// scales down (ReplicaSet's burst): a cluster asking for a million
	// replicas is served 500 at a time, and the other clusters get their
	// turn in between. KubeRay creates them all in one pass.
	DefaultMaxPodWritesPerPass = 500
)

// ProvisionObserver records the kuberay_cluster_provisioned_duration_seconds
// metric and forgets deleted clusters. internal/metrics.RayCluster
// implements it.
type ProvisionObserver interface {
	ObserveProvisioned(name, namespace string, d time.Duration)
	Forget(name, namespace string)
	// ObserveIdleEnded counts a cluster its idle termination policy ended.
	ObserveIdleEnded(name, namespace, policy string)
	// ObserveRollingUpdateBatch counts a batch of a rolling worker group
	// update and the out-of-date Pods it deleted.
	ObserveRollingUpdateBatch(namespace string, replaced int)
}

// Options are the operator settings the controller depends on, read once at
// start-up from the configuration, the environment knobs and the gates.
type Options struct {
	// RequeueAfter is the unconditional requeue interval
	// (RAYCLUSTER_DEFAULT_REQUEUE_SECONDS_ENV); zero means 300 s.
	RequeueAfter time.Duration
	// MaxPodWritesPerPass bounds the worker Pods one pass creates or
	// deletes to scale; zero means DefaultMaxPodWritesPerPass.
	MaxPodWritesPerPass int
	// GCSFTRedisCleanup adds the Redis cleanup finalizer to GCS fault
	// tolerant clusters (ENABLE_GCS_FT_REDIS_CLEANUP, on unless "false").
	GCSFTRedisCleanup bool
	// RandomPodDelete lets scale-down pick workers itself even when the
	// autoscaler is on (ENABLE_RANDOM_POD_DELETE).
	RandomPodDelete bool
	// HeadServiceClusterIP keeps the head Service a ClusterIP Service
	// (ENABLE_RAY_HEAD_CLUSTER_IP_SERVICE).
	HeadServiceClusterIP bool
	// UseRoute exposes the dashboard with an OpenShift Route instead of an
	// Ingress: on OpenShift, unless USE_INGRESS_ON_OPENSHIFT is set.
	UseRoute bool
	// Pod shapes the Pods and the cleanup Job the builders make.
	Pod raypod.Options
	// Features are the feature gates; nil means every gate at its default.
	Features validation.FeatureGates
	// CertManagerMissing says the API server serves no cert-manager.io/v1
	// Certificates: clusters asking for mutual TLS are then refused.
	// SetupWithManager finds it out with the RayClusterMTLS gate on.
	CertManagerMissing bool
	// MTLSCertificates is where TLS clusters' certificates come from unless
	// their annotation says otherwise (--mtls-certificates): cert-manager
	// (also when empty) or the operator.
	MTLSCertificates string
	// MTLSCertificateDuration is the lifetime of the leaf certificates the
	// operator issues; zero means KubeRay's 90 days.
	MTLSCertificateDuration time.Duration
	// BatchScheduler is the batch scheduler plugin (--batch-scheduler): it
	// prepares each pass before the Pods (a PodGroup) and decorates every
	// Pod. Nil means none.
	BatchScheduler batchscheduler.Scheduler
	// BatchSchedulerFactory made BatchScheduler; it may add watches.
	BatchSchedulerFactory batchscheduler.Factory
	// WatchNamespaces are the namespaces the operator watches
	// (--watch-namespace); nil means all. The start-up NetworkPolicy sweep
	// reads only these.
	WatchNamespaces []string
	// CreationEvents is how creations are reported (--creation-events):
	// configv1alpha1.CreationEventsPerPass, or anything else for per group.
	CreationEvents string
	// IdleProbeInterval and IdleProbeTimeout are how often the dashboard of
	// a cluster with idleTerminationOptions is looked at, and how long one
	// look may take; zero means dashboard.ActivityProbeInterval and
	// dashboard.ActivityProbeTimeout.
	IdleProbeInterval time.Duration
	IdleProbeTimeout  time.Duration
}

// Deps are the controller's collaborators; tests replace them.
type Deps struct {
	// Core are the client, live reader, recorder and clock. The live reader
	// lets the expectations notice a Pod deleted before the cache saw it;
	// left nil, expectations wait for their timeout in that case.
	managerdeps.Core
	// Expectations tracks Pod creations and deletions not yet in the cache;
	// nil means a new tracker reading through Client and LiveReader.
	Expectations *expectations.Scale
	// Metrics may be nil when the operator's metrics are off.
	Metrics ProvisionObserver
	// Random is the source of auth tokens; nil means crypto/rand.
	Random io.Reader
	// Dashboards makes the dashboard clients the idle check's probe uses;
	// nil means plain HTTP.
	Dashboards dashboard.ClientProvider
	// KubeProxy, when set (--use-kubernetes-proxy), routes dashboard calls
	// through the API server; Dashboards must then be built on its Clients.
	KubeProxy *dashboard.KubeProxy
}

// Reconciler reconciles RayClusters.
type Reconciler struct {
	Deps
	opts   Options
	events eventrecord.Recorder
	steps  []passsteps.Step[*scope]
	// activity probes the dashboards of clusters with
	// idleTerminationOptions; after each look it sends the cluster on
	// idleEvents, which SetupWithManager watches.
	activity   *dashboard.ActivityProbe
	idleEvents chan event.GenericEvent
	dashboards dashboard.Access
}

// New returns a Reconciler.
func New(deps Deps, opts Options) *Reconciler {
	core := deps.Defaulted()
	if deps.Expectations == nil {
		// The caller's live reader, not its default: the cache asked again
		// cannot tell more than the cache.
		deps.Expectations = expectations.New(core.Client, core.Clock).WithLiveReader(deps.LiveReader)
	}
	deps.Core = core
	if opts.RequeueAfter <= 0 {
		opts.RequeueAfter = defaultRequeue
	}
	if opts.MaxPodWritesPerPass <= 0 {
		opts.MaxPodWritesPerPass = DefaultMaxPodWritesPerPass
	}
	if opts.Features == nil {
		opts.Features = features.NewGate()
	}
	// The Pods' index labels and the controller's replica handling must
	// agree, so the gate decides both.
	opts.Pod.MultiHostIndexing = opts.Features.Enabled(features.RayMultiHostIndexing)
	opts.Pod.HistoryServer = opts.Features.Enabled(features.RayClusterHistoryServer)
	opts.Pod.MTLS = opts.Features.Enabled(features.RayClusterMTLS)
	if opts.BatchScheduler != nil {
		opts.Pod.BatchScheduler = podDecorator{opts.BatchScheduler}
	}
	r := &Reconciler{Deps: deps, opts: opts, events: deps.Events()}
	r.initIdleProbe()
	r.steps = r.orderedSteps()
	return r
}

// +kubebuilder:rbac:groups=ray.io,resources=rayclusters,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=ray.io,resources=rayclusters/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=ray.io,resources=rayclusters/finalizers,verbs=update
// +kubebuilder:rbac:groups=core,resources=pods,verbs=get;list;watch;create;update;patch;delete;deletecollection
// +kubebuilder:rbac:groups=core,resources=pods/status,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=core,resources=services,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=core,resources=services/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=core,resources=persistentvolumeclaims,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=core,resources=serviceaccounts,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups=core,resources=secrets,verbs=get;list;watch;create
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=roles,verbs=get;list;watch;create;delete;update
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=rolebindings,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups=networking.k8s.io,resources=ingresses,verbs=get;list;watch;create;update;delete;patch
// +kubebuilder:rbac:groups=networking.k8s.io,resources=ingressclasses,verbs=get;list;watch
// +kubebuilder:rbac:groups=route.openshift.io,resources=routes,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch;update

// Reconcile brings one RayCluster one pass closer to its spec.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return prologue.Run(ctx, req.NamespacedName, &rayv1.RayCluster{}, r.prologueKind(), r.pass)
}

func (r *Reconciler) prologueKind() prologue.Kind[*rayv1.RayCluster] {
	return prologue.Kind[*rayv1.RayCluster]{
		Name: rayv1.KindRayCluster, Read: prologue.FromCache(r.Client),
		Forget:    func(key types.NamespacedName) { r.forget(key.Namespace, key.Name) },
		ManagedBy: func(c *rayv1.RayCluster) *string { return c.Spec.ManagedBy },
		Finalize:  r.finalize,
		Validate:  r.validate, Invalid: r.invalid,
	}
}

// pass runs the steps, the first of which ensures the finalizer. The status
// is compared with the cluster as read (cached), which saves copying a
// large status again.
func (r *Reconciler) pass(ctx context.Context, cluster, cached *rayv1.RayCluster) (ctrl.Result, error) {
	s := newScopeFrom(cluster, cached, r.opts.MaxPodWritesPerPass)
	res, reconcileErr := passsteps.Run(ctx, r.steps, s)
	reconcileErr = errors.Join(reconcileErr, r.sendHeld(ctx, s))
	r.flushEvents(s)
	return r.finishPass(ctx, s, res, reconcileErr)
}

// forget drops what the controller keeps in memory about a deleted cluster.
func (r *Reconciler) forget(namespace, name string) {
	r.Expectations.Forget(namespace, name)
	r.activity.Stop(types.NamespacedName{Namespace: namespace, Name: name})
	if r.Metrics != nil {
		r.Metrics.Forget(name, namespace)
	}
}
