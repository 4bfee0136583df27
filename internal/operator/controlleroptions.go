package operator

import (
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ray-operator/ray-operator/internal/controller/raycluster"
	"github.com/ray-operator/ray-operator/internal/controller/raycronjob"
	"github.com/ray-operator/ray-operator/internal/controller/rayjob"
	"github.com/ray-operator/ray-operator/internal/controller/rayservice"
	"github.com/ray-operator/ray-operator/internal/raypod"
)

// The options of each controller, derived in one place from the settings
// the operator read once at start-up (flags, config file, environment
// knobs, gates). Controllers never read those themselves.

func rayClusterOptions(d Deps) raycluster.Options {
	cfg, knobs := d.Config, d.Knobs
	return raycluster.Options{
		RequeueAfter:            knobs.RayClusterRequeue,
		GCSFTRedisCleanup:       knobs.GCSFTRedisCleanup,
		RandomPodDelete:         knobs.RandomPodDelete,
		HeadServiceClusterIP:    knobs.RayHeadClusterIPService,
		UseRoute:                d.IsOpenShift && !knobs.IngressOnOpenShift,
		Features:                d.Features,
		CreationEvents:          cfg.CreationEvents,
		MTLSCertificates:        cfg.MTLSCertificates,
		MTLSCertificateDuration: durationOf(cfg.MTLSCertificateDuration),
		WatchNamespaces:         watchNamespaces(cfg.WatchNamespace),
		BatchScheduler:          d.BatchScheduler,
		BatchSchedulerFactory:   d.BatchSchedulerFactory,
		Pod: raypod.Options{
			DisableInitContainerInjection: !knobs.InitContainerInjection,
			DeterministicHeadPodName:      knobs.DeterministicHeadPodName,
			DisableProbesInjection:        !knobs.ProbesInjection,
			LoginShell:                    knobs.LoginShell,
			ClusterDomain:                 knobs.ClusterDomain,
			HeadSidecarContainers:         cfg.HeadSidecarContainers,
			WorkerSidecarContainers:       cfg.WorkerSidecarContainers,
			DefaultContainerEnvs:          cfg.DefaultContainerEnvs,
			DefaultPodLabels:              cfg.DefaultPodLabels,
			DefaultPodAnnotations:         cfg.DefaultPodAnnotations,
		},
	}
}

func rayJobOptions(d Deps) rayjob.Options {
	return rayjob.Options{
		TransitionGracePeriod:        d.Knobs.RayJobDeploymentStatusTransitionGrace,
		StatusCheckTimeout:           d.Knobs.RayJobStatusCheckTimeout,
		DeleteRayJobAfterJobFinishes: d.Config.DeleteRayJobAfterJobFinishes,
		Features:                     d.Features,
		ClusterDomain:                d.Knobs.ClusterDomain,
		HeadServiceClusterIP:         d.Knobs.RayHeadClusterIPService,
		BatchScheduler:               d.BatchScheduler,
	}
}

func rayServiceOptions(d Deps) rayservice.Options {
	return rayservice.Options{
		ZeroDowntime:         d.Knobs.ZeroDowntime,
		ClusterDomain:        d.Knobs.ClusterDomain,
		HeadServiceClusterIP: d.Knobs.RayHeadClusterIPService,
		Features:             d.Features,
		IdleRequeue:          d.Config.RayServiceStatusPollInterval.Duration,
	}
}

func rayCronJobOptions(d Deps) raycronjob.Options {
	return raycronjob.Options{Features: d.Features}
}

// watchNamespaces splits --watch-namespace; nil means all namespaces.
func watchNamespaces(s string) []string {
	var out []string
	for ns := range strings.SplitSeq(s, ",") {
		if ns != "" {
			out = append(out, ns)
		}
	}
	return out
}

// durationOf is d's duration, zero when unset.
func durationOf(d *metav1.Duration) time.Duration {
	if d == nil {
		return 0
	}
	return d.Duration
}
