package operator

import (
	"context"
	"fmt"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/ray-operator/ray-operator/internal/batchscheduler/plugins"
	"github.com/ray-operator/ray-operator/internal/features"
)

// Run sets up logging from s, builds the manager against restConfig and
// runs it until ctx ends. It returns nil after a clean shutdown.
func Run(ctx context.Context, s Settings, zapFlags *Flags, restConfig *rest.Config) error {
	logger, closeLog, err := NewLogger(s.Config, zapFlags.Zap)
	if err != nil {
		return err
	}
	defer func() { _ = closeLog() }()
	ctrl.SetLogger(logger)
	klog.SetLogger(logger)
	logSettings(logger.WithName("setup"), s)
	logger.WithName("setup").Info("Garbage collector", "gcPercent", applyGCPercent(s.GCPercent))

	mgr, err := New(s, restConfig)
	if err != nil {
		return err
	}
	logger.WithName("setup").Info("Starting manager")
	if err := mgr.Start(ctx); err != nil {
		return fmt.Errorf("running manager: %w", err)
	}
	logger.WithName("setup").Info("Manager stopped")
	return nil
}

func logSettings(log logr.Logger, s Settings) {
	for _, w := range s.Warnings {
		log.Info("Warning: " + w)
	}
	log.Info("Loaded feature gates", "featureGates", features.State(s.Features))
	log.Info("Configuration", "watchNamespace", s.Config.WatchNamespace, "leaderElection", s.Config.LeaderElectionEnabled(),
		"metricsAddr", s.Config.MetricsAddr, "probeAddr", s.Config.ProbeAddr, "reconcileConcurrency", s.Config.Concurrency(), "rayJobReconcileConcurrency", s.Config.RayJobConcurrency(),
		"batchScheduler", plugins.Selected(s.Config, s.Features.Enabled(features.KubernetesWAS)))
	log.Info("Environment knobs", "knobs", fmt.Sprintf("%+v", s.Knobs))
}
