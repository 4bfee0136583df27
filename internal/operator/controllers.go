package operator

import (
	"fmt"

	"k8s.io/component-base/featuregate"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	configv1alpha1 "github.com/ray-operator/ray-operator/api/config/v1alpha1"
	"github.com/ray-operator/ray-operator/internal/batchscheduler"
	"github.com/ray-operator/ray-operator/internal/controller/raycluster"
	"github.com/ray-operator/ray-operator/internal/controller/raycronjob"
	"github.com/ray-operator/ray-operator/internal/controller/rayjob"
	"github.com/ray-operator/ray-operator/internal/controller/rayservice"
	"github.com/ray-operator/ray-operator/internal/dashboard"
	"github.com/ray-operator/ray-operator/internal/features"
	"github.com/ray-operator/ray-operator/internal/managerdeps"
	"github.com/ray-operator/ray-operator/internal/metrics"
)

// Deps is what the operator hands every controller at set-up. Controllers
// take what they need from here and never read flags or the environment.
type Deps struct {
	// Config is the operator configuration.
	Config configv1alpha1.Configuration
	// Knobs are the operator environment variables.
	Knobs configv1alpha1.Knobs
	// Features is the read-only view of the feature gates.
	Features featuregate.FeatureGate
	// IsOpenShift says whether the cluster serves OpenShift's API groups.
	IsOpenShift bool
	// Clock is the time source.
	Clock clock.WithTickerAndDelayedExecution
	// BatchScheduler is the batch scheduler plugin (--batch-scheduler),
	// nil for none; BatchSchedulerFactory made it.
	BatchScheduler        batchscheduler.Scheduler
	BatchSchedulerFactory batchscheduler.Factory
	// Dashboards is Settings.Dashboards.
	Dashboards dashboard.ClientProvider
}

// Controller is one kind's controller as the operator registers it.
type Controller struct {
	// Name names the controller in logs and errors, e.g. "RayCluster".
	Name string
	// Enabled reports whether to run the controller; nil means always.
	Enabled func(Deps) bool
	// Setup builds the controller and adds it to mgr.
	Setup func(mgr manager.Manager, deps Deps) error
}

// DefaultControllers lists the controllers the operator runs: the one place
// where each kind's controller is registered as it lands.
func DefaultControllers() []Controller {
	return []Controller{
		{Name: "RayCluster", Setup: setupRayCluster},
		{Name: "RayJob", Setup: setupRayJob},
		{Name: "RayService", Setup: setupRayService},
		{Name: "RayCronJob", Enabled: rayCronJobEnabled, Setup: setupRayCronJob},
	}
}

// rayCronJobEnabled reports the RayCronJob feature gate (KubeRay's, alpha
// and off by default).
func rayCronJobEnabled(d Deps) bool {
	return d.Features.Enabled(features.RayCronJob)
}

// setupRayCronJob adds the RayCronJob controller; with --enable-metrics its
// metrics are registered too.
func setupRayCronJob(mgr manager.Manager, d Deps) error {
	deps := raycronjob.Deps{Core: managerdeps.Core{Clock: d.Clock}}
	if d.Config.EnableMetrics {
		m := metrics.NewRayCronJobMetrics(mgr.GetClient(), mgr.GetLogger().WithName("metrics"))
		if err := m.Register(); err != nil {
			return fmt.Errorf("registering RayCronJob metrics: %w", err)
		}
		deps.Metrics = m
	}
	r := raycronjob.NewForManager(mgr, deps, raycronjob.Options{Features: d.Features})
	return r.SetupWithManager(mgr, d.Config.Concurrency())
}

func setupRayCluster(mgr manager.Manager, d Deps) error {
	proxy, err := kubeProxy(mgr, d)
	if err != nil {
		return err
	}
	return raycluster.Setup(mgr, raycluster.Settings{
		Config: d.Config, Knobs: d.Knobs, Features: d.Features, IsOpenShift: d.IsOpenShift, Clock: d.Clock,
		Dashboards: baseDashboards(d, proxy), KubeProxy: proxy,
		BatchScheduler: d.BatchScheduler, BatchSchedulerFactory: d.BatchSchedulerFactory,
	})
}

// setupRayJob adds the RayJob controller. With --enable-metrics (as in
// KubeRay, only then) the RayJob metrics are registered with
// controller-runtime's registry and the controller records into them.
func setupRayJob(mgr manager.Manager, d Deps) error {
	proxy, err := kubeProxy(mgr, d)
	if err != nil {
		return err
	}
	dashboards, err := dashboardProvider(mgr, d, proxy)
	if err != nil {
		return err
	}
	deps := rayjob.Deps{Core: managerdeps.Core{Clock: d.Clock}, Dashboards: dashboards, KubeProxy: proxy}
	if d.Config.EnableMetrics {
		m := metrics.NewRayJobMetrics(mgr.GetClient(), mgr.GetLogger().WithName("metrics"))
		if err := m.Register(); err != nil {
			return fmt.Errorf("registering RayJob metrics: %w", err)
		}
		deps.Metrics = m
	}
	r := rayjob.NewForManager(mgr, deps, rayjob.Options{
		TransitionGracePeriod:        d.Knobs.RayJobDeploymentStatusTransitionGrace,
		StatusCheckTimeout:           d.Knobs.RayJobStatusCheckTimeout,
		DeleteRayJobAfterJobFinishes: d.Config.DeleteRayJobAfterJobFinishes,
		Features:                     d.Features,
		ClusterDomain:                d.Knobs.ClusterDomain,
		HeadServiceClusterIP:         d.Knobs.RayHeadClusterIPService,
		BatchScheduler:               d.BatchScheduler,
	})
	return r.SetupWithManager(mgr, d.Config.RayJobConcurrency())
}

// setupRayService adds the RayService controller; with --enable-metrics its
// metrics are registered too.
func setupRayService(mgr manager.Manager, d Deps) error {
	if d.Config.EnableMetrics {
		if err := metrics.NewRayServiceMetrics(mgr.GetClient(), mgr.GetLogger().WithName("metrics")).Register(); err != nil {
			return fmt.Errorf("registering RayService metrics: %w", err)
		}
	}
	proxy, err := kubeProxy(mgr, d)
	if err != nil {
		return err
	}
	r := rayservice.NewForManager(mgr, rayservice.Deps{Core: managerdeps.Core{Clock: d.Clock}, Dashboards: baseDashboards(d, proxy), KubeProxy: proxy}, rayservice.Options{
		ZeroDowntime:         d.Knobs.ZeroDowntime,
		ClusterDomain:        d.Knobs.ClusterDomain,
		HeadServiceClusterIP: d.Knobs.RayHeadClusterIPService,
		Features:             d.Features,
		IdleRequeue:          d.Config.RayServiceStatusPollInterval.Duration,
	})
	return r.SetupWithManager(mgr, d.Config.Concurrency())
}

// kubeProxy is the API server proxy dashboard calls go through with
// --use-kubernetes-proxy, else nil.
func kubeProxy(mgr manager.Manager, d Deps) (*dashboard.KubeProxy, error) {
	if !d.Config.UseKubernetesProxy {
		return nil, nil
	}
	return dashboard.NewKubeProxy(mgr.GetConfig())
}

// baseDashboards makes dashboard clients: through the API server's proxy
// with --use-kubernetes-proxy, else Deps.Dashboards, else plain HTTP.
func baseDashboards(d Deps, proxy *dashboard.KubeProxy) dashboard.ClientProvider {
	switch {
	case proxy != nil:
		return proxy.Clients()
	case d.Dashboards != nil:
		return d.Dashboards
	}
	return dashboard.NewHTTPProvider()
}

// dashboardProvider returns the Ray dashboard clients the RayJob controller
// uses: plain HTTP (through the API server with proxy), behind the job info
// cache when AsyncJobInfoQuery is on (the cache's pollers then run with the
// manager).
func dashboardProvider(mgr manager.Manager, d Deps, proxy *dashboard.KubeProxy) (dashboard.ClientProvider, error) {
	provider := baseDashboards(d, proxy)
	if !d.Features.Enabled(features.AsyncJobInfoQuery) {
		return provider, nil
	}
	cache := dashboard.NewJobInfoCache(d.Clock)
	if err := mgr.Add(cache); err != nil {
		return nil, fmt.Errorf("adding the dashboard job info cache: %w", err)
	}
	return cache.Provider(provider), nil
}
