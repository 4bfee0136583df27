package operator

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"go.uber.org/zap/zapcore"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	configv1alpha1 "github.com/ray-operator/ray-operator/api/config/v1alpha1"
	"github.com/ray-operator/ray-operator/internal/features"
	"github.com/ray-operator/ray-operator/internal/webhooks"
)

// Flags are the operator's command-line flags, bound to a FlagSet. Their
// names and defaults are KubeRay's.
type Flags struct {
	configFile           string
	featureGates         string
	forcedClusterUpgrade bool
	leaderElection       bool
	qps                  float64
	burst                int
	rayServicePoll       time.Duration
	mtlsDuration         time.Duration
	cfg                  configv1alpha1.Configuration
	version              bool
	webhook              webhooks.Options
	webhookDNSNames      string
	pprofAddr            string

	// Zap holds the controller-runtime --zap-* logging flags.
	Zap zap.Options
}

// BindFlags defines the operator's flags on fs.
func BindFlags(fs *flag.FlagSet) *Flags {
	f := &Flags{Zap: zap.Options{TimeEncoder: zapcore.ISO8601TimeEncoder}, webhook: webhooks.Defaults()}
	c := &f.cfg
	fs.StringVar(&f.configFile, "config", "", "Path to a Configuration file (YAML). When set, the other configuration flags are ignored; --feature-gates still applies.")
	fs.StringVar(&c.MetricsAddr, "metrics-addr", configv1alpha1.DefaultMetricsAddr, `The address the metrics endpoint binds to; "0" disables it.`)
	fs.StringVar(&c.ProbeAddr, "health-probe-bind-address", configv1alpha1.DefaultProbeAddr, "The address the healthz/readyz endpoints bind to.")
	fs.BoolVar(&f.leaderElection, "enable-leader-election", configv1alpha1.DefaultEnableLeaderElection, "Enable leader election, so that only one operator replica is active.")
	fs.StringVar(&c.LeaderElectionNamespace, "leader-election-namespace", "", "Namespace of the leader election Lease; defaults to the Pod's namespace.")
	fs.IntVar(&c.ReconcileConcurrency, "reconcile-concurrency", 0, "Maximum concurrent reconciles per controller; 0 picks the defaults: 4 per CPU (at least 4), and for the RayJob controller, whose passes wait on Ray dashboards, 16 per CPU (at least 16). KubeRay's is 1.")
	fs.StringVar(&c.WatchNamespace, "watch-namespace", "", "Comma-separated namespaces to watch; empty watches all namespaces.")
	fs.BoolVar(&f.forcedClusterUpgrade, "forced-cluster-upgrade", false, "(Deprecated) Has no effect.")
	fs.StringVar(&c.LogFile, "log-file-path", "", "Also write logs to this file (rotated).")
	fs.StringVar(&c.LogFileEncoder, "log-file-encoder", configv1alpha1.EncoderJSON, "Encoder of the log file: json or console.")
	fs.StringVar(&c.LogStdoutEncoder, "log-stdout-encoder", configv1alpha1.EncoderJSON, "Encoder of stdout logs: json or console.")
	fs.BoolVar(&c.EnableBatchScheduler, "enable-batch-scheduler", false, "(Deprecated) Enable the Volcano batch scheduler; use --batch-scheduler.")
	fs.StringVar(&c.BatchScheduler, "batch-scheduler", "", "Batch scheduler: volcano, yunikorn, scheduler-plugins or kai-scheduler.")
	fs.BoolVar(&c.UseKubernetesProxy, "use-kubernetes-proxy", false, "Reach the Ray head through the API server's proxy subresource.")
	fs.StringVar(&f.featureGates, "feature-gates", "", "Feature gates as key=value pairs, e.g. RayCronJob=true,RayJobDeletionPolicy=false.")
	fs.BoolVar(&c.EnableMetrics, "enable-metrics", false, "Emit the operator's RayCluster, RayJob and RayService metrics.")
	fs.DurationVar(&f.rayServicePoll, "rayservice-status-poll-interval", configv1alpha1.DefaultRayServiceStatusPollInterval, "How often the application statuses of an idle RayService are read again.")
	fs.Float64Var(&f.qps, "qps", configv1alpha1.DefaultQPS, "Requests per second to the API server; 0 sets no client-side limit (the API server's Priority and Fairness applies).")
	fs.IntVar(&f.burst, "burst", configv1alpha1.DefaultBurst, "Request burst to the API server, when --qps is set.")
	fs.StringVar(&c.CreationEvents, "creation-events", configv1alpha1.DefaultCreationEvents,
		`How RayClusters report the objects they create: "per-group" (KubeRay's event reasons) or "per-pass" (one CreatedResources event per pass that creates several kinds).`)
	fs.StringVar(&c.MTLSCertificates, "mtls-certificates", configv1alpha1.DefaultMTLSCertificates,
		`Where the certificates of RayClusters with tlsOptions come from: "cert-manager" (KubeRay's) or "operator" (issued by the operator, no cert-manager needed); a cluster's ray.io/mtls-certificates annotation overrides it.`)
	fs.DurationVar(&f.mtlsDuration, "mtls-certificate-duration", configv1alpha1.DefaultMTLSCertificateDuration,
		"Lifetime of the head and worker certificates the operator issues (--mtls-certificates=operator); renewed when a third of it, or 15 days, is left.")
	fs.BoolVar(&f.version, "version", false, "Print the operator's version and exit.")
	fs.StringVar(&f.pprofAddr, "pprof-bind-address", "", `The address Go's pprof endpoints (/debug/pprof/) bind to; empty or "0" serves none. Also applies with --config.`)
	bindWebhookFlags(fs, f)
	f.Zap.BindFlags(fs)
	return f
}

// bindWebhookFlags defines the --webhook-* flags; the webhooks themselves
// are switched on by ENABLE_WEBHOOKS=true, as in KubeRay.
func bindWebhookFlags(fs *flag.FlagSet, f *Flags) {
	w := &f.webhook
	fs.IntVar(&w.Port, "webhook-port", w.Port, "Port of the validating webhook server (with ENABLE_WEBHOOKS=true).")
	fs.StringVar(&w.Host, "webhook-host", "", "Address the webhook server binds to; empty binds all.")
	fs.StringVar(&w.CertDir, "webhook-cert-dir", w.CertDir, "Directory of the webhook server's tls.crt and tls.key.")
	fs.StringVar(&w.CertManagement, "webhook-cert-management", w.CertManagement,
		`"internal": the operator makes, rotates and injects its own certificate (no cert-manager); "external": cert-manager or another tool provides it.`)
	fs.StringVar(&w.Namespace, "webhook-namespace", "", "Namespace of the certificate Secret and webhook Service; defaults to POD_NAMESPACE.")
	fs.StringVar(&w.SecretName, "webhook-secret-name", w.SecretName, "Secret holding the webhook certificate (internal management).")
	fs.StringVar(&w.ServiceName, "webhook-service-name", w.ServiceName, "Service in front of the webhook server; the certificate names <service>.<namespace>.svc.")
	fs.StringVar(&w.ConfigurationName, "webhook-configuration-name", w.ConfigurationName, "ValidatingWebhookConfiguration whose CA bundle the operator keeps (internal management).")
	fs.StringVar(&f.webhookDNSNames, "webhook-extra-dns-names", "", "Comma-separated extra DNS names of the webhook certificate, e.g. localhost.")
	fs.BoolVar(&w.WriteCertFiles, "webhook-write-cert-files", false, "Copy the certificate Secret into --webhook-cert-dir (an operator outside a Pod, where no kubelet mounts it).")
}

// webhookOptions completes the --webhook-* flags with ENABLE_WEBHOOKS and
// POD_NAMESPACE.
func (f *Flags) webhookOptions(enabled bool, lookup configv1alpha1.LookupFunc) (webhooks.Options, error) {
	w := f.webhook
	w.Enabled = enabled
	if w.Namespace == "" {
		w.Namespace, _ = lookup("POD_NAMESPACE")
	}
	if f.webhookDNSNames != "" {
		w.ExtraDNSNames = strings.Split(f.webhookDNSNames, ",")
	}
	if err := w.Validate(); err != nil {
		return webhooks.Options{}, fmt.Errorf("invalid webhook settings: %w", err)
	}
	return w, nil
}

// VersionRequested reports whether --version was given: the binary then
// prints buildinfo.Get() and exits without starting anything.
func (f *Flags) VersionRequested() bool { return f.version }

// Resolve turns the parsed flags, the configuration file they name and the
// environment (read through lookup) into Settings: defaulted, validated,
// with the feature gates set.
func (f *Flags) Resolve(lookup configv1alpha1.LookupFunc) (Settings, error) {
	knobs, warnings := configv1alpha1.LoadKnobs(lookup)
	cfg, fileWarnings, err := f.configuration()
	if err != nil {
		return Settings{}, err
	}
	warnings = append(warnings, fileWarnings...)
	if f.forcedClusterUpgrade {
		warnings = append(warnings, "--forced-cluster-upgrade is deprecated and has no effect")
	}
	// KubeRay reads this knob both ways over its history; either turns it on.
	cfg.DeleteRayJobAfterJobFinishes = cfg.DeleteRayJobAfterJobFinishes || knobs.DeleteRayJobCRAfterJobFinishes
	configv1alpha1.SetDefaults(&cfg)

	gate, err := features.Build(cfg.FeatureGates, f.featureGates)
	if err != nil {
		return Settings{}, err
	}
	if err := configv1alpha1.Validate(&cfg, gate.Enabled(features.KubernetesWAS)); err != nil {
		return Settings{}, fmt.Errorf("invalid configuration:\n%w", err)
	}
	hooks, err := f.webhookOptions(knobs.Webhooks, lookup)
	if err != nil {
		return Settings{}, err
	}
	return Settings{Config: cfg, Knobs: knobs, Features: gate, Webhooks: hooks, Warnings: warnings, GCPercent: gcPercent(lookup), PprofAddr: f.pprofAddr}, nil
}

// configuration returns the configuration from the file when one is named,
// else from the flags.
func (f *Flags) configuration() (configv1alpha1.Configuration, []string, error) {
	if f.configFile == "" {
		cfg := f.cfg
		cfg.EnableLeaderElection = new(f.leaderElection)
		cfg.QPS = new(f.qps)
		cfg.Burst = new(f.burst)
		cfg.RayServiceStatusPollInterval = &metav1.Duration{Duration: f.rayServicePoll}
		cfg.MTLSCertificateDuration = &metav1.Duration{Duration: f.mtlsDuration}
		return cfg, nil, nil
	}
	data, err := os.ReadFile(f.configFile)
	if err != nil {
		return configv1alpha1.Configuration{}, nil, fmt.Errorf("reading --config: %w", err)
	}
	cfg, warnings, err := configv1alpha1.Decode(data)
	if err != nil {
		return configv1alpha1.Configuration{}, nil, fmt.Errorf("--config %s: %w", f.configFile, err)
	}
	return cfg, warnings, nil
}
