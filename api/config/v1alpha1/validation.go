package v1alpha1

import (
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Batch scheduler names accepted by BatchScheduler.
const (
	BatchSchedulerVolcano          = "volcano"
	BatchSchedulerYunikorn         = "yunikorn"
	BatchSchedulerSchedulerPlugins = "scheduler-plugins"
	BatchSchedulerKai              = "kai-scheduler"
)

// SupportedBatchSchedulers lists the values BatchScheduler may take.
var SupportedBatchSchedulers = []string{
	BatchSchedulerVolcano, BatchSchedulerYunikorn, BatchSchedulerSchedulerPlugins, BatchSchedulerKai,
}

// Validate checks a defaulted Configuration and returns every problem found,
// each naming the field (as in the config file) and the bad value.
// kubernetesWAS says whether the KubernetesWAS feature gate is on, which
// changes what the batch scheduler fields may hold.
func Validate(cfg *Configuration, kubernetesWAS bool) error {
	errs := []error{
		validateAddr("metricsAddr", cfg.MetricsAddr),
		validateAddr("probeAddr", cfg.ProbeAddr),
		validateEncoder("logFileEncoder", cfg.LogFileEncoder),
		validateEncoder("logStdoutEncoder", cfg.LogStdoutEncoder),
		validateNamespaces(cfg.WatchNamespace),
		validateClient(cfg),
		validateBatchScheduler(cfg, kubernetesWAS),
	}
	if c := cfg.CreationEvents; c != CreationEventsPerGroup && c != CreationEventsPerPass {
		errs = append(errs, fmt.Errorf("creationEvents: %q is not %q or %q", c, CreationEventsPerGroup, CreationEventsPerPass))
	}
	if m := cfg.MTLSCertificates; m != MTLSCertificatesCertManager && m != MTLSCertificatesOperator {
		errs = append(errs, fmt.Errorf("mtlsCertificates: %q is not %q or %q", m, MTLSCertificatesCertManager, MTLSCertificatesOperator))
	}
	if d := cfg.MTLSCertificateDuration; d != nil && d.Duration < MinMTLSCertificateDuration {
		errs = append(errs, fmt.Errorf("mtlsCertificateDuration: %v is shorter than %v", d.Duration, MinMTLSCertificateDuration))
	}
	if cfg.ReconcileConcurrency < 0 {
		errs = append(errs, fmt.Errorf("reconcileConcurrency: must be at least 1 (or unset for the defaults), got %d", cfg.ReconcileConcurrency))
	}
	if ns := cfg.LeaderElectionNamespace; ns != "" && len(validation.IsDNS1123Label(ns)) > 0 {
		errs = append(errs, fmt.Errorf("leaderElectionNamespace: %q is not a valid namespace name", ns))
	}
	return errors.Join(errs...)
}

// validateAddr accepts "host:port", ":port" and "0" (disabled).
func validateAddr(field, addr string) error {
	if addr == "0" {
		return nil
	}
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return fmt.Errorf("%s: %q is not host:port or \"0\": %w", field, addr, err)
	}
	return nil
}

func validateEncoder(field, encoder string) error {
	if encoder != EncoderJSON && encoder != EncoderConsole {
		return fmt.Errorf("%s: %q is not %q or %q", field, encoder, EncoderJSON, EncoderConsole)
	}
	return nil
}

func validateNamespaces(list string) error {
	if list == "" {
		return nil
	}
	var errs []error
	for ns := range strings.SplitSeq(list, ",") {
		if len(validation.IsDNS1123Label(ns)) > 0 {
			errs = append(errs, fmt.Errorf("watchNamespace: %q is not a valid namespace name", ns))
		}
	}
	return errors.Join(errs...)
}

func validateClient(cfg *Configuration) error {
	var errs []error
	if cfg.QPS != nil && *cfg.QPS < 0 {
		errs = append(errs, fmt.Errorf("qps: must not be negative (0: no client-side limit), got %v", *cfg.QPS))
	}
	if cfg.Burst != nil && *cfg.Burst <= 0 {
		errs = append(errs, fmt.Errorf("burst: must be positive, got %d", *cfg.Burst))
	}
	return errors.Join(errs...)
}

// errKubernetesWASWithBatchScheduler is KubeRay's refusal of the
// KubernetesWAS gate together with a batch scheduler.
var errKubernetesWASWithBatchScheduler = errors.New("the KubernetesWAS feature gate cannot be combined with --batch-scheduler or --enable-batch-scheduler")

// validateBatchScheduler applies KubeRay's rules: the deprecated switch and
// the scheduler name exclude each other, the name must be known, and the
// KubernetesWAS gate excludes both.
func validateBatchScheduler(cfg *Configuration, kubernetesWAS bool) error {
	if kubernetesWAS {
		if cfg.EnableBatchScheduler || cfg.BatchScheduler != "" {
			return errKubernetesWASWithBatchScheduler
		}
		return nil
	}
	if cfg.EnableBatchScheduler && cfg.BatchScheduler != "" {
		return errors.New("batchScheduler: both enableBatchScheduler (deprecated) and batchScheduler are set; use batchScheduler only")
	}
	if s := cfg.BatchScheduler; s != "" && !slices.Contains(SupportedBatchSchedulers, s) {
		return fmt.Errorf("batchScheduler: %q is not supported; use one of %v", s, SupportedBatchSchedulers)
	}
	return nil
}
