package v1alpha1

import (
	"runtime"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Defaults, as KubeRay's except DefaultQPS and DefaultReconcileConcurrency.
const (
	DefaultMetricsAddr          = ":8080"
	DefaultProbeAddr            = ":8082"
	DefaultEnableLeaderElection = true
	// DefaultQPS sets no client-side limit: the API server's Priority and
	// Fairness shares its capacity instead. KubeRay's is 100.
	DefaultQPS        = float64(0)
	DefaultBurst      = 200
	DefaultLogEncoder = EncoderJSON
	// DefaultRayServiceStatusPollInterval is the default of
	// Configuration.RayServiceStatusPollInterval.
	DefaultRayServiceStatusPollInterval = 30 * time.Second
	// DefaultCreationEvents is the default of Configuration.CreationEvents.
	DefaultCreationEvents = CreationEventsPerGroup
	// DefaultMTLSCertificates is the default of Configuration.MTLSCertificates.
	DefaultMTLSCertificates = MTLSCertificatesCertManager
	// DefaultMTLSCertificateDuration is the default of
	// Configuration.MTLSCertificateDuration: KubeRay's leaf lifetime.
	DefaultMTLSCertificateDuration = 2160 * time.Hour
	// MinMTLSCertificateDuration is the shortest MTLSCertificateDuration.
	MinMTLSCertificateDuration = time.Minute
)

// Values of Configuration.MTLSCertificates.
const (
	MTLSCertificatesCertManager = "cert-manager"
	MTLSCertificatesOperator    = "operator"
)

// Values of Configuration.CreationEvents.
const (
	CreationEventsPerGroup = "per-group"
	CreationEventsPerPass  = "per-pass"
)

// DefaultReconcileConcurrency is the number of workers of each controller
// unless set: four per CPU the process may use (GOMAXPROCS, which follows a
// container's CPU limit), at least four. A pass mostly waits on the API
// server or a Ray dashboard, so several workers per CPU keep one slow
// dashboard from holding up every other RayJob. KubeRay's default is 1.
func DefaultReconcileConcurrency() int {
	return max(4, 4*runtime.GOMAXPROCS(0))
}

// DefaultRayJobReconcileConcurrency is the RayJob controller's number of
// workers unless ReconcileConcurrency is set: sixteen per CPU, at least
// sixteen. A RayJob pass asks the Ray dashboard, which may answer in
// seconds or time out; with four workers per CPU, 1,000 RayJobs against
// slow dashboards took 2.26x the time they take against instant ones on a
// 2-CPU machine (198.8 s), with sixteen 1.04x (112.6 s;
// docs/dev/benchmarks.md).
func DefaultRayJobReconcileConcurrency() int {
	return max(16, 16*runtime.GOMAXPROCS(0))
}

// Concurrency is the number of workers of the RayCluster, RayService and
// RayCronJob controllers: ReconcileConcurrency, or the default when unset.
func (c *Configuration) Concurrency() int {
	if c.ReconcileConcurrency > 0 {
		return c.ReconcileConcurrency
	}
	return DefaultReconcileConcurrency()
}

// RayJobConcurrency is the number of workers of the RayJob controller:
// ReconcileConcurrency, or DefaultRayJobReconcileConcurrency when unset.
func (c *Configuration) RayJobConcurrency() int {
	if c.ReconcileConcurrency > 0 {
		return c.ReconcileConcurrency
	}
	return DefaultRayJobReconcileConcurrency()
}

// Log encoders.
const (
	EncoderJSON    = "json"
	EncoderConsole = "console"
)

// SetDefaults fills every unset field of cfg with its default.
func SetDefaults(cfg *Configuration) {
	setString(&cfg.MetricsAddr, DefaultMetricsAddr)
	setString(&cfg.ProbeAddr, DefaultProbeAddr)
	setString(&cfg.LogFileEncoder, DefaultLogEncoder)
	setString(&cfg.LogStdoutEncoder, DefaultLogEncoder)
	setString(&cfg.CreationEvents, DefaultCreationEvents)
	setString(&cfg.MTLSCertificates, DefaultMTLSCertificates)
	if cfg.MTLSCertificateDuration == nil {
		cfg.MTLSCertificateDuration = &metav1.Duration{Duration: DefaultMTLSCertificateDuration}
	}
	if cfg.EnableLeaderElection == nil {
		cfg.EnableLeaderElection = new(DefaultEnableLeaderElection)
	}
	if cfg.QPS == nil {
		cfg.QPS = new(DefaultQPS)
	}
	if cfg.Burst == nil {
		cfg.Burst = new(DefaultBurst)
	}
	if cfg.RayServiceStatusPollInterval == nil {
		cfg.RayServiceStatusPollInterval = &metav1.Duration{Duration: DefaultRayServiceStatusPollInterval}
	}
}

func setString(field *string, value string) {
	if *field == "" {
		*field = value
	}
}
