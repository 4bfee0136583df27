package operator

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	certmanagerv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	routev1 "github.com/openshift/api/route/v1"
	"github.com/prometheus/client_golang/prometheus"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/client-go/discovery"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/component-base/featuregate"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	configv1alpha1 "github.com/ray-operator/ray-operator/api/config/v1alpha1"
	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/batchscheduler"
	"github.com/ray-operator/ray-operator/internal/batchscheduler/plugins"
	"github.com/ray-operator/ray-operator/internal/buildinfo"
	"github.com/ray-operator/ray-operator/internal/clusterindex"
	"github.com/ray-operator/ray-operator/internal/features"
	"github.com/ray-operator/ray-operator/internal/webhooks"
)

const (
	// LeaderElectionID is the name of the leader election Lease, as KubeRay's.
	LeaderElectionID = "ray-operator-leader"
	// LeaseDuration, RenewDeadline and RetryPeriod time leader election:
	// controller-runtime's defaults, which KubeRay keeps. A candidate takes
	// over a Lease LeaseDuration after it last saw it change; the leader
	// renews every RetryPeriod (jittered, client-go's
	// leaderelection.JitterFactor) and gives up leading when it has not
	// renewed for RenewDeadline. The failover test derives its bounds from
	// them.
	LeaseDuration = 15 * time.Second
	RenewDeadline = 10 * time.Second
	RetryPeriod   = 2 * time.Second
	// UserAgent identifies the operator to the API server.
	UserAgent = "ray-operator"
	// readyzCacheTimeout bounds how long a readiness probe waits for the
	// informer caches.
	readyzCacheTimeout = time.Second
)

// openShiftAPIGroups are the API groups whose presence means OpenShift.
var openShiftAPIGroups = []string{"route.openshift.io", "security.openshift.io", "config.openshift.io"}

// New builds the operator's manager against the cluster restConfig points
// at, with every controller of s.Controllers (DefaultControllers when nil)
// registered. Start it with mgr.Start(ctx); it returns when ctx ends.
func New(s Settings, restConfig *rest.Config) (manager.Manager, error) {
	cfg := clientConfig(s.Config, restConfig)
	wasGate := s.Features.Enabled(features.KubernetesWAS)
	batch, err := batchSchedulerFactory(s.Config, wasGate)
	if err != nil {
		return nil, err
	}
	scheme, err := NewScheme(s.Features, batch)
	if err != nil {
		return nil, err
	}
	if err := checkServerVersion(s.Features, cfg); err != nil {
		return nil, err
	}
	opts := managerOptions(s.Config, s.Webhooks, scheme)
	opts.PprofBindAddress = s.PprofAddr
	if s.SkipControllerNameValidation {
		opts.Controller.SkipNameValidation = &s.SkipControllerNameValidation
	}
	mgr, err := ctrl.NewManager(cfg, opts)
	if err != nil {
		return nil, fmt.Errorf("creating manager: %w", err)
	}
	if err := clusterindex.Register(context.Background(), mgr.GetFieldIndexer()); err != nil {
		return nil, err
	}
	isOpenShift, err := detectOpenShift(cfg)
	if err != nil {
		return nil, err
	}
	deps := Deps{Config: s.Config, Knobs: s.Knobs, Features: s.Features, IsOpenShift: isOpenShift, Clock: clock.RealClock{}, Dashboards: s.Dashboards}
	if batch != nil {
		deps.BatchSchedulerFactory = batch
		if deps.BatchScheduler, err = batch.New(context.Background(), cfg, mgr.GetClient()); err != nil {
			return nil, fmt.Errorf("starting the %s batch scheduler plugin: %w", plugins.Selected(s.Config, wasGate), err)
		}
	}
	controllers := s.Controllers
	if controllers == nil {
		controllers = DefaultControllers()
	}
	if err := setupControllers(mgr, deps, controllers); err != nil {
		return nil, err
	}
	if err := addHealthChecks(mgr); err != nil {
		return nil, err
	}
	if err := registerBuildInfo(ctrlmetrics.Registry); err != nil {
		return nil, err
	}
	if s.Webhooks.Enabled {
		if err := webhooks.Setup(mgr, s.Webhooks, s.Features); err != nil {
			return nil, err
		}
	}
	return mgr, nil
}

// registerBuildInfo serves ray_operator_build_info on the metrics endpoint,
// whatever --enable-metrics says (that flag is about KubeRay's resource
// metrics). A second manager in the same process finds it registered.
func registerBuildInfo(reg prometheus.Registerer) error {
	err := reg.Register(buildinfo.Get().Collector())
	if errors.As(err, new(prometheus.AlreadyRegisteredError)) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("registering the build info metric: %w", err)
	}
	return nil
}

// NewScheme returns the types the operator reads and writes: client-go's,
// ray.io/v1, OpenShift routes, with RayServiceIncrementalUpgrade Gateway
// API, with RayClusterMTLS cert-manager's Issuers and Certificates, and those of the batch scheduler plugin (nil: none).
func NewScheme(gate featuregate.FeatureGate, batch batchscheduler.Factory) (*runtime.Scheme, error) {
	scheme := runtime.NewScheme()
	adders := []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, batchv1.AddToScheme, rayv1.AddToScheme, routev1.Install}
	if gate.Enabled(features.RayServiceIncrementalUpgrade) {
		adders = append(adders, gwv1.Install)
	}
	if gate.Enabled(features.RayClusterMTLS) {
		adders = append(adders, certmanagerv1.AddToScheme)
	}
	if a, ok := batch.(batchscheduler.SchemeAdder); ok {
		adders = append(adders, a.AddToScheme)
	}
	for _, add := range adders {
		if err := add(scheme); err != nil {
			return nil, fmt.Errorf("building scheme: %w", err)
		}
	}
	return scheme, nil
}

// batchSchedulerFactory is the factory of the plugin the configuration (or
// the KubernetesWAS gate, kubernetesWAS) selects, nil for none. Validate has
// already refused unknown names; this error would mean a name it accepts
// has no plugin.
func batchSchedulerFactory(c configv1alpha1.Configuration, kubernetesWAS bool) (batchscheduler.Factory, error) {
	name := plugins.Selected(c, kubernetesWAS)
	if name == "" {
		return nil, nil
	}
	return plugins.Factory(name)
}

func clientConfig(c configv1alpha1.Configuration, restConfig *rest.Config) *rest.Config {
	cfg := rest.CopyConfig(restConfig)
	cfg.UserAgent = UserAgent
	if c.QPS != nil {
		cfg.QPS = float32(*c.QPS)
		if *c.QPS == 0 {
			cfg.QPS = -1 // client-go: no rate limiter
		}
	}
	if c.Burst != nil {
		cfg.Burst = *c.Burst
	}
	return cfg
}

func managerOptions(c configv1alpha1.Configuration, hooks webhooks.Options, scheme *runtime.Scheme) manager.Options {
	opts := manager.Options{
		Scheme:                        scheme,
		Cache:                         CacheOptions(c.WatchNamespace),
		Metrics:                       metricsserver.Options{BindAddress: c.MetricsAddr},
		HealthProbeBindAddress:        c.ProbeAddr,
		LeaderElection:                c.LeaderElectionEnabled(),
		LeaderElectionID:              LeaderElectionID,
		LeaderElectionNamespace:       c.LeaderElectionNamespace,
		LeaderElectionReleaseOnCancel: true,
		LeaseDuration:                 ptr.To(LeaseDuration),
		RenewDeadline:                 ptr.To(RenewDeadline),
		RetryPeriod:                   ptr.To(RetryPeriod),
	}
	if hooks.Enabled {
		opts.WebhookServer = webhook.NewServer(webhook.Options{Host: hooks.Host, Port: hooks.Port, CertDir: hooks.CertDir})
	}
	return opts
}

// CacheOptions scopes the informers: to the watched namespaces, to the
// Pods of Ray nodes, to the Jobs and NetworkPolicies the operator created, and to the Secrets
// of Ray clusters (labelled ray.io/cluster, the one label of the auth Secret
// the operator generates, as KubeRay's). This keeps memory and watch traffic
// down on big clusters: the RayCluster controller owns Secrets, which would
// otherwise cache every Secret in the cluster. Any other Secret, such as the
// one authOptions.secretName names, must be read with mgr.GetAPIReader().
func CacheOptions(watchNamespace string) cache.Options {
	createdByOperator := mustSelector(rayv1.LabelCreatedBy, selection.Equals, rayv1.CreatedByOperator)
	opts := cache.Options{
		// No controller reads managedFields, which are a large part of
		// every object (a Pod carries the operator's, the scheduler's and
		// the kubelet's). Updates of cached objects keep the stored ones:
		// the API server leaves managedFields alone when a request has none.
		DefaultTransform: cache.TransformStripManagedFields(),
		ByObject: map[client.Object]cache.ByObject{
			&corev1.Pod{}: {
				Label:     mustSelector(rayv1.LabelNodeType, selection.In, string(rayv1.HeadNode), string(rayv1.WorkerNode), string(rayv1.RedisCleanupNode)),
				Transform: trimPod,
			},
			&batchv1.Job{}: {Label: createdByOperator},
			// The RayCluster controller owns NetworkPolicies (gate
			// RayClusterNetworkPolicy); it looks a missing one up on the
			// API server before creating it, to notice a user's of that name.
			&networkingv1.NetworkPolicy{}: {Label: createdByOperator},
			&corev1.Secret{}:              {Label: mustSelector(rayv1.LabelCluster, selection.Exists)},
			// Only the slices of serve Services: they mirror the Service's
			// labels, and every serve Service carries ray.io/serve.
			&discoveryv1.EndpointSlice{}: {Label: mustSelector(rayv1.LabelServe, selection.Exists)},
		}}
	if watchNamespace != "" {
		opts.DefaultNamespaces = map[string]cache.Config{}
		for ns := range strings.SplitSeq(watchNamespace, ",") {
			opts.DefaultNamespaces[ns] = cache.Config{}
		}
	}
	return opts
}

func mustSelector(key string, op selection.Operator, values ...string) labels.Selector {
	req, err := labels.NewRequirement(key, op, values)
	if err != nil {
		panic(fmt.Sprintf("operator: selector on constant label %s: %v", key, err))
	}
	return labels.NewSelector().Add(*req)
}

func detectOpenShift(cfg *rest.Config) (bool, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return false, fmt.Errorf("creating discovery client: %w", err)
	}
	groups, err := dc.ServerGroups()
	if err != nil {
		return false, fmt.Errorf("detecting OpenShift from the API server's groups: %w", err)
	}
	for _, g := range groups.Groups {
		if slices.Contains(openShiftAPIGroups, g.Name) {
			return true, nil
		}
	}
	return false, nil
}

func setupControllers(mgr manager.Manager, deps Deps, controllers []Controller) error {
	log := mgr.GetLogger().WithName("setup")
	for _, c := range controllers {
		if c.Enabled != nil && !c.Enabled(deps) {
			log.Info("Controller disabled", "controller", c.Name)
			continue
		}
		if err := c.Setup(mgr, deps); err != nil {
			return fmt.Errorf("setting up the %s controller: %w", c.Name, err)
		}
		log.Info("Controller registered", "controller", c.Name)
	}
	return nil
}

// addHealthChecks serves /healthz (the process is alive) and /readyz (the
// informer caches have synced).
func addHealthChecks(mgr manager.Manager) error {
	if err := mgr.AddHealthzCheck("ping", func(*http.Request) error { return nil }); err != nil {
		return fmt.Errorf("adding healthz check: %w", err)
	}
	cacheSynced := func(req *http.Request) error {
		ctx, cancel := context.WithTimeout(req.Context(), readyzCacheTimeout)
		defer cancel()
		if !mgr.GetCache().WaitForCacheSync(ctx) {
			return errors.New("informer caches have not synced")
		}
		return nil
	}
	if err := mgr.AddReadyzCheck("cache-sync", cacheSynced); err != nil {
		return fmt.Errorf("adding readyz check: %w", err)
	}
	return nil
}
