package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Configuration is what the operator is started with. Its JSON names are
// KubeRay's, so a KubeRay configuration file is accepted as it is.
type Configuration struct {
	metav1.TypeMeta `json:",inline"`

	// MetricsAddr is the address the metrics endpoint binds to. "0" turns
	// the metrics server off.
	MetricsAddr string `json:"metricsAddr,omitempty"`

	// ProbeAddr is the address the healthz/readyz endpoints bind to.
	ProbeAddr string `json:"probeAddr,omitempty"`

	// EnableLeaderElection makes only one replica of the operator active.
	EnableLeaderElection *bool `json:"enableLeaderElection,omitempty"`

	// LeaderElectionNamespace holds the leader election Lease. Defaults to
	// the operator Pod's namespace.
	LeaderElectionNamespace string `json:"leaderElectionNamespace,omitempty"`

	// WatchNamespace is a comma-separated list of namespaces to watch;
	// empty watches all namespaces.
	WatchNamespace string `json:"watchNamespace,omitempty"`

	// LogFile is a file that receives a copy of the logs (rotated).
	LogFile string `json:"logFile,omitempty"`

	// LogFileEncoder is "json" or "console"; empty means "json".
	LogFileEncoder string `json:"logFileEncoder,omitempty"`

	// LogStdoutEncoder is "json" or "console"; empty means "json".
	LogStdoutEncoder string `json:"logStdoutEncoder,omitempty"`

	// BatchScheduler names the batch scheduler integration: one of
	// SupportedBatchSchedulers, or empty for none.
	BatchScheduler string `json:"batchScheduler,omitempty"`

	// HeadSidecarContainers are injected into every head Pod.
	HeadSidecarContainers []corev1.Container `json:"headSidecarContainers,omitempty"`

	// WorkerSidecarContainers are injected into every worker Pod.
	WorkerSidecarContainers []corev1.Container `json:"workerSidecarContainers,omitempty"`

	// DefaultContainerEnvs are added to every Ray container.
	DefaultContainerEnvs []corev1.EnvVar `json:"defaultContainerEnvs,omitempty"`

	// DefaultPodLabels are added to every Ray Pod.
	DefaultPodLabels map[string]string `json:"defaultPodLabels,omitempty"`

	// DefaultPodAnnotations are added to every Ray Pod.
	DefaultPodAnnotations map[string]string `json:"defaultPodAnnotations,omitempty"`

	// ReconcileConcurrency is the number of workers of each controller;
	// unset (0), DefaultReconcileConcurrency() and, for the RayJob
	// controller, DefaultRayJobReconcileConcurrency() (KubeRay's default is
	// 1 for all). Read it through Concurrency and RayJobConcurrency.
	ReconcileConcurrency int `json:"reconcileConcurrency,omitempty"`

	// EnableBatchScheduler is the deprecated switch for Volcano; use
	// BatchScheduler instead. Setting both is an error.
	EnableBatchScheduler bool `json:"enableBatchScheduler,omitempty"`

	// UseKubernetesProxy makes the operator reach the Ray head through the
	// API server's services/proxy subresource instead of directly.
	UseKubernetesProxy bool `json:"useKubernetesProxy,omitempty"`

	// DeleteRayJobAfterJobFinishes deletes the RayJob itself, not only its
	// RayCluster, when shutdownAfterJobFinishes applies.
	DeleteRayJobAfterJobFinishes bool `json:"deleteRayJobAfterJobFinishes,omitempty"`

	// EnableMetrics turns on the operator's own RayCluster/RayJob/RayService
	// metrics on the metrics endpoint.
	EnableMetrics bool `json:"enableMetrics,omitempty"`

	// RayServiceStatusPollInterval is how often the application statuses of
	// an idle RayService (all applications RUNNING, no upgrade) are read
	// again; while anything is in flight it is looked at every 2 s. Not a
	// KubeRay setting: KubeRay polls every RayService every 2 s.
	RayServiceStatusPollInterval *metav1.Duration `json:"rayServiceStatusPollInterval,omitempty"`

	// QPS limits requests per second to the API server; 0 (the default)
	// sets no client-side limit and leaves fairness to the API server's
	// Priority and Fairness. KubeRay's default is 100.
	QPS *float64 `json:"qps,omitempty"`

	// Burst is the request burst allowed above QPS (when QPS is set).
	Burst *int `json:"burst,omitempty"`

	// CreationEvents is how the RayCluster controller reports the objects it
	// creates: "per-group" (the default: KubeRay's reasons, one event per
	// object, Pods one per group per pass) or "per-pass" (one event
	// "CreatedResources" for all a pass created when it created more than
	// one kind: at start-up 1 event per cluster instead of 3). Not a
	// KubeRay setting.
	CreationEvents string `json:"creationEvents,omitempty"`

	// MTLSCertificates is where the certificates of RayClusters with
	// spec.tlsOptions.enabled come from: "cert-manager" (the default,
	// KubeRay's: cert-manager Issuers and Certificates) or "operator" (the
	// operator issues the same CA and certificates into the same Secrets
	// itself, without cert-manager). A cluster's ray.io/mtls-certificates
	// annotation overrides it. Not a KubeRay setting.
	MTLSCertificates string `json:"mtlsCertificates,omitempty"`

	// MTLSCertificateDuration is the lifetime of the head and worker
	// certificates the operator issues (MTLSCertificates "operator"; default
	// 2160h, KubeRay's 90 days; at least 1m). They are issued again when a
	// third of it, or 15 days, is left, whichever is sooner. Not a KubeRay
	// setting.
	MTLSCertificateDuration *metav1.Duration `json:"mtlsCertificateDuration,omitempty"`

	// FeatureGates sets feature gates by name. KubeRay has no such field (it
	// takes only --feature-gates); here both work and the flag wins.
	FeatureGates map[string]bool `json:"featureGates,omitempty"`
}

// LeaderElectionEnabled reports whether leader election is on, treating an
// unset field as its default.
func (c *Configuration) LeaderElectionEnabled() bool {
	if c.EnableLeaderElection == nil {
		return DefaultEnableLeaderElection
	}
	return *c.EnableLeaderElection
}
