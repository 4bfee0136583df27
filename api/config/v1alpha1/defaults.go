package v1alpha1

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Defaults, as KubeRay's.
const (
	DefaultMetricsAddr          = ":8080"
	DefaultProbeAddr            = ":8082"
	DefaultEnableLeaderElection = true
	DefaultReconcileConcurrency = 1
	DefaultQPS                  = float64(0) // no client-side limit: the API server's Priority and Fairness applies
	DefaultBurst                = 200
	DefaultLogEncoder           = EncoderJSON
	DefaultCollectorImage       = "quay.io/kuberay/collector:nightly"
	// DefaultRayServiceStatusPollInterval is the default of
	// Configuration.RayServiceStatusPollInterval.
	DefaultRayServiceStatusPollInterval = 30 * time.Second
)

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
	setString(&cfg.CollectorImage, DefaultCollectorImage)
	if cfg.EnableLeaderElection == nil {
		cfg.EnableLeaderElection = new(DefaultEnableLeaderElection)
	}
	if cfg.ReconcileConcurrency == 0 {
		cfg.ReconcileConcurrency = DefaultReconcileConcurrency
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
