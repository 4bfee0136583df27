// Package rayservice reconciles RayService objects: it keeps a RayCluster
// running Ray Serve with the applications of serveConfigV2, points the
// RayService's head and serve Services at the cluster that is ready to
// serve, and on a change of the cluster spec brings up a new (pending)
// cluster and moves traffic to it without downtime, at once (NewCluster) or
// step by step through the Gateway API (NewClusterWithIncrementalUpgrade).
//
// Reconcile only loads the object, handles managedBy, deletion, the
// finalizer and validation, runs the ordered steps of steps.go and writes
// the status once. What must survive an operator restart lives on the
// objects, never only in memory: the serve config applied to a cluster and
// an old cluster's deletion deadline are annotations on that RayCluster.
package rayservice

import (
	"context"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	ctrl "sigs.k8s.io/controller-runtime"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/buildinfo"
	"github.com/ray-operator/ray-operator/internal/clusterowner"
	"github.com/ray-operator/ray-operator/internal/dashboard"
	"github.com/ray-operator/ray-operator/internal/eventrecord"
	"github.com/ray-operator/ray-operator/internal/managerdeps"
	"github.com/ray-operator/ray-operator/internal/passsteps"
	"github.com/ray-operator/ray-operator/internal/prologue"
	"github.com/ray-operator/ray-operator/internal/validation"
)

// Requeue intervals. KubeRay requeues every RayService every 2 s forever;
// here the 2 s interval applies only while something is in flight, and an
// idle RayService (every application RUNNING, no pending cluster) is looked
// at again only to refresh its application statuses.
const (
	// DefaultInFlightRequeue is how soon a RayService with work in flight
	// (a cluster coming up, applications deploying) is looked at again.
	DefaultInFlightRequeue = 2 * time.Second
	// DefaultIdleRequeue is how often an idle RayService's application
	// statuses are refreshed.
	DefaultIdleRequeue = 30 * time.Second
	// DefaultClusterDeletionDelay is how long an old cluster is kept after
	// it stopped serving (spec.rayClusterDeletionDelaySeconds unset).
	DefaultClusterDeletionDelay = 60 * time.Second
)

// Options are the operator settings the controller depends on, read once at
// start-up.
type Options struct {
	// ZeroDowntime enables new clusters on spec changes for RayServices
	// that set no upgrade type (ENABLE_ZERO_DOWNTIME).
	ZeroDowntime bool
	// ClusterDomain is the cluster DNS domain of dashboard URLs.
	ClusterDomain string
	// HeadServiceClusterIP makes the head Service a ClusterIP Service
	// (ENABLE_RAY_HEAD_CLUSTER_IP_SERVICE).
	HeadServiceClusterIP bool
	// Features are the feature gates (RayServiceIncrementalUpgrade,
	// RayClusterStatusConditions, and those the cluster spec is validated
	// with). Nil means every gate off.
	Features validation.FeatureGates
	// OperatorVersion is recorded on clusters in ray.io/kuberay-version
	// (empty: this binary's version, buildinfo.Version); a
	// cluster recorded by another version is updated in place, never
	// replaced, so that an operator upgrade or handover upgrades nothing.
	OperatorVersion string
	// InFlightRequeue and IdleRequeue override the defaults above.
	InFlightRequeue, IdleRequeue time.Duration
	// ServeRetryBase and ServeRetryMax override the back-off of failing
	// requests to Ray Serve (dashboard.DefaultRetryBase doubling up to
	// dashboard.DefaultRetryMax).
	ServeRetryBase, ServeRetryMax time.Duration
}

// Deps are the controller's collaborators; tests replace them.
type Deps struct {
	// Core are the client, live reader, recorder and clock. The live reader
	// reads what the cache may not have yet (auth Secrets, the serve config
	// just recorded on a cluster).
	managerdeps.Core
	// Dashboards makes dashboard clients.
	Dashboards dashboard.ClientProvider
	// KubeProxy, when set (--use-kubernetes-proxy), routes dashboard calls
	// and Serve proxy health checks through the API server; Dashboards must
	// then be built on its Clients.
	KubeProxy *dashboard.KubeProxy
	// ProxyHealth checks the Serve proxy of a head Pod; nil means a direct
	// HTTP check with KubeRay's 2 s timeout.
	ProxyHealth dashboard.ProxyChecker
	// NameSuffix makes the random suffix of a new cluster's name; nil means
	// five random lowercase alphanumerics, as KubeRay.
	NameSuffix func() string
}

// Reconciler reconciles RayServices.
type Reconciler struct {
	Deps
	opts       Options
	events     eventrecord.Recorder
	clusters   clusterowner.Clusters
	dashboards dashboard.Access
	// serveBackoff holds the back-off of failing requests to Ray Serve.
	serveBackoff *dashboard.Backoff
}

// New returns a Reconciler, filling in the defaults of Deps and Options.
func New(deps Deps, opts Options) *Reconciler {
	deps.Core = deps.Defaulted()
	if deps.ProxyHealth == nil && deps.KubeProxy != nil {
		deps.ProxyHealth = deps.KubeProxy.ProxyCheck()
	}
	if deps.ProxyHealth == nil {
		deps.ProxyHealth = dashboard.DirectProxyCheck(dashboard.DirectProxyTimeout)
	}
	if deps.NameSuffix == nil {
		deps.NameSuffix = func() string { return utilrand.String(5) }
	}
	if opts.Features == nil {
		opts.Features = validation.NoFeatureGates{}
	}
	if opts.OperatorVersion == "" {
		opts.OperatorVersion = buildinfo.Version()
	}
	opts.InFlightRequeue = cmpOr(opts.InFlightRequeue, DefaultInFlightRequeue)
	opts.IdleRequeue = cmpOr(opts.IdleRequeue, DefaultIdleRequeue)
	return &Reconciler{
		Deps:         deps,
		opts:         opts,
		events:       deps.Events(),
		clusters:     clusterowner.Clusters{Client: deps.Client, Events: deps.Events(), Live: deps.LiveReader},
		dashboards:   dashboard.Access{Secrets: deps.LiveReader, Clients: deps.Dashboards, ClusterDomain: opts.ClusterDomain, Proxy: deps.KubeProxy},
		serveBackoff: &dashboard.Backoff{Base: opts.ServeRetryBase, Max: opts.ServeRetryMax},
	}
}

func cmpOr(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// +kubebuilder:rbac:groups=ray.io,resources=rayservices,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=ray.io,resources=rayservices/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=ray.io,resources=rayservices/finalizers,verbs=update
// +kubebuilder:rbac:groups=ray.io,resources=rayclusters,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=core,resources=services,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=core,resources=pods,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=core,resources=secrets,verbs=get;list;watch
// +kubebuilder:rbac:groups=discovery.k8s.io,resources=endpointslices,verbs=get;list;watch
// +kubebuilder:rbac:groups=gateway.networking.k8s.io,resources=gateways;httproutes,verbs=get;list;watch;create;update;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch;update

// Reconcile moves one RayService one pass towards its spec.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return prologue.Run(ctx, req.NamespacedName, &rayv1.RayService{}, r.prologueKind(), r.pass)
}

func (r *Reconciler) prologueKind() prologue.Kind[*rayv1.RayService] {
	return prologue.Kind[*rayv1.RayService]{
		Name: rayv1.KindRayService, Read: prologue.FromCache(r.Client),
		Forget:    r.serveBackoff.ForgetObject,
		ManagedBy: func(rs *rayv1.RayService) *string { return rs.Spec.ManagedBy },
		Finalize:  r.finalize,
		Validate:  r.validate, Invalid: r.invalid,
	}
}

// pass runs the steps, the first of which ensures the finalizer.
func (r *Reconciler) pass(ctx context.Context, rs, _ *rayv1.RayService) (ctrl.Result, error) {
	s := newScope(rs, r.Clock.Now())
	res, err := passsteps.Run(ctx, r.orderedSteps(), s)
	return r.finishPass(ctx, s, res, err)
}

// invalid ensures the finalizer of a RayService validate refused, as of
// any other (KubeRay adds it before validating), then reports it.
func (r *Reconciler) invalid(ctx context.Context, rs *rayv1.RayService, err error) (ctrl.Result, error) {
	s := newScope(rs, r.Clock.Now())
	if res, ferr := r.ensureFinalizerStep(ctx, s); res.Stop || ferr != nil {
		return r.finishPass(ctx, s, res, ferr)
	}
	return r.failValidation(ctx, s, err)
}

// ignoreConflict drops a conflict: the object changed, and the watch event
// of that change brings the next pass.
func ignoreConflict(err error) error {
	if apierrors.IsConflict(err) {
		return nil
	}
	return err
}
