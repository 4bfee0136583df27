package operator

import (
	"fmt"

	"github.com/go-logr/logr"
	"k8s.io/component-base/featuregate"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	configv1alpha1 "github.com/ray-operator/ray-operator/api/config/v1alpha1"
	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
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

// Each setupX below has one shape: the collaborators (the shared core, then
// the kind's own), the kind's metrics when --enable-metrics is on (as in
// KubeRay, only then), its options from the operator settings
// (controlleroptions.go), and the controller added to mgr with its
// concurrency.

func setupRayCluster(mgr manager.Manager, d Deps) error {
	proxy, err := kubeProxy(mgr, d)
	if err != nil {
		return err
	}
	deps := raycluster.Deps{Core: d.core(), Dashboards: baseDashboards(d, proxy), KubeProxy: proxy}
	if err := registerMetrics(mgr, d, rayv1.KindRayCluster, metrics.NewRayCluster, func(m *metrics.RayCluster) { deps.Metrics = m }); err != nil {
		return err
	}
	return raycluster.NewForManager(mgr, deps, rayClusterOptions(d)).SetupWithManager(mgr, d.Config.Concurrency())
}

func setupRayJob(mgr manager.Manager, d Deps) error {
	proxy, err := kubeProxy(mgr, d)
	if err != nil {
		return err
	}
	dashboards, err := dashboardProvider(mgr, d, proxy)
	if err != nil {
		return err
	}
	deps := rayjob.Deps{Core: d.core(), Dashboards: dashboards, KubeProxy: proxy}
	if err := registerMetrics(mgr, d, rayv1.KindRayJob, metrics.NewRayJobMetrics, func(m *metrics.RayJobMetrics) { deps.Metrics = m }); err != nil {
		return err
	}
	return rayjob.NewForManager(mgr, deps, rayJobOptions(d)).SetupWithManager(mgr, d.Config.RayJobConcurrency())
}

// setupRayService: the RayService metrics read the RayServices themselves;
// the controller records none.
func setupRayService(mgr manager.Manager, d Deps) error {
	proxy, err := kubeProxy(mgr, d)
	if err != nil {
		return err
	}
	deps := rayservice.Deps{Core: d.core(), Dashboards: baseDashboards(d, proxy), KubeProxy: proxy}
	if err := registerMetrics(mgr, d, rayv1.KindRayService, metrics.NewRayServiceMetrics, nil); err != nil {
		return err
	}
	return rayservice.NewForManager(mgr, deps, rayServiceOptions(d)).SetupWithManager(mgr, d.Config.Concurrency())
}

func setupRayCronJob(mgr manager.Manager, d Deps) error {
	deps := raycronjob.Deps{Core: d.core()}
	if err := registerMetrics(mgr, d, rayv1.KindRayCronJob, metrics.NewRayCronJobMetrics, func(m *metrics.RayCronJobMetrics) { deps.Metrics = m }); err != nil {
		return err
	}
	return raycronjob.NewForManager(mgr, deps, rayCronJobOptions(d)).SetupWithManager(mgr, d.Config.Concurrency())
}

// core is the part of every controller's collaborators the operator sets:
// the clock. NewForManager takes the rest from the manager.
func (d Deps) core() managerdeps.Core {
	return managerdeps.Core{Clock: d.Clock}
}

// registerMetrics makes a kind's metrics with newMetrics, registers them
// with controller-runtime's registry and hands them to use (nil: the
// controller records none), when --enable-metrics is on; else it does
// nothing, and the controller's Metrics stay nil.
func registerMetrics[M interface{ Register() error }](mgr manager.Manager, d Deps, kind string,
	newMetrics func(client.Reader, logr.Logger) M, use func(M)) error {
	if !d.Config.EnableMetrics {
		return nil
	}
	m := newMetrics(mgr.GetClient(), mgr.GetLogger().WithName("metrics"))
	if err := m.Register(); err != nil {
		return fmt.Errorf("registering %s metrics: %w", kind, err)
	}
	if use != nil {
		use(m)
	}
	return nil
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
