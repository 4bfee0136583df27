package v1alpha1

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Operator environment variables, named as KubeRay names them.
const (
	EnvRayClusterDefaultRequeueSeconds       = "RAYCLUSTER_DEFAULT_REQUEUE_SECONDS_ENV"
	EnvEnableGCSFTRedisCleanup               = "ENABLE_GCS_FT_REDIS_CLEANUP"
	EnvDeleteRayJobCRAfterJobFinishes        = "DELETE_RAYJOB_CR_AFTER_JOB_FINISHES"
	EnvEnableRayHeadClusterIPService         = "ENABLE_RAY_HEAD_CLUSTER_IP_SERVICE"
	EnvEnableInitContainerInjection          = "ENABLE_INIT_CONTAINER_INJECTION"
	EnvEnableProbesInjection                 = "ENABLE_PROBES_INJECTION"
	EnvEnableRandomPodDelete                 = "ENABLE_RANDOM_POD_DELETE"
	EnvUseIngressOnOpenShift                 = "USE_INGRESS_ON_OPENSHIFT"
	EnvRayJobDeploymentStatusTransitionGrace = "RAYJOB_DEPLOYMENT_STATUS_TRANSITION_GRACE_PERIOD_SECONDS"
	EnvRayJobStatusCheckTimeout              = "RAYJOB_STATUS_CHECK_TIMEOUT_SECONDS"
	EnvEnableLoginShell                      = "ENABLE_LOGIN_SHELL"
	EnvEnableZeroDowntime                    = "ENABLE_ZERO_DOWNTIME"
	EnvClusterDomain                         = "CLUSTER_DOMAIN"
	EnvEnableWebhooks                        = "ENABLE_WEBHOOKS"
	EnvEnableDeterministicHeadPodName        = "ENABLE_DETERMINISTIC_HEAD_POD_NAME"
)

// Knob defaults, as KubeRay's.
const (
	DefaultRayClusterRequeue                = 300 * time.Second
	DefaultRayJobDeploymentStatusTransition = 300 * time.Second
	DefaultRayJobStatusCheckTimeout         = 300 * time.Second
	DefaultClusterDomain                    = "cluster.local"
)

// LookupFunc looks an environment variable up, like os.LookupEnv.
type LookupFunc func(key string) (string, bool)

// Knobs are the operator's environment variables, read once at start-up.
// Controllers get them from here and never read the environment themselves.
type Knobs struct {
	// RayClusterRequeue is the unconditional requeue interval of a RayCluster
	// (RAYCLUSTER_DEFAULT_REQUEUE_SECONDS_ENV, integer seconds).
	RayClusterRequeue time.Duration
	// GCSFTRedisCleanup adds the Redis cleanup finalizer to GCS FT clusters
	// (ENABLE_GCS_FT_REDIS_CLEANUP; on unless "false").
	GCSFTRedisCleanup bool
	// DeleteRayJobCRAfterJobFinishes deletes the RayJob itself once its TTL
	// passes (DELETE_RAYJOB_CR_AFTER_JOB_FINISHES; off unless "true").
	DeleteRayJobCRAfterJobFinishes bool
	// RayHeadClusterIPService makes the head Service a ClusterIP Service
	// instead of a headless one (ENABLE_RAY_HEAD_CLUSTER_IP_SERVICE; off unless "true").
	RayHeadClusterIPService bool
	// InitContainerInjection injects the wait-for-GCS init container into
	// workers (ENABLE_INIT_CONTAINER_INJECTION; on unless "false").
	InitContainerInjection bool
	// ProbesInjection injects readiness and liveness probes into Ray
	// containers (ENABLE_PROBES_INJECTION; on unless "false").
	ProbesInjection bool
	// RandomPodDelete lets the operator delete arbitrary workers when
	// scaling down an autoscaled cluster (ENABLE_RANDOM_POD_DELETE; off unless "true").
	RandomPodDelete bool
	// IngressOnOpenShift uses Ingress instead of Route on OpenShift
	// (USE_INGRESS_ON_OPENSHIFT; off unless "true").
	IngressOnOpenShift bool
	// RayJobDeploymentStatusTransitionGrace is how long a RayJob whose Ray job
	// is terminal may stay Running (RAYJOB_DEPLOYMENT_STATUS_TRANSITION_GRACE_PERIOD_SECONDS).
	RayJobDeploymentStatusTransitionGrace time.Duration
	// RayJobStatusCheckTimeout is how long the dashboard of a Running RayJob
	// may keep failing before the RayJob fails with
	// JobStatusCheckTimeoutExceeded (RAYJOB_STATUS_CHECK_TIMEOUT_SECONDS;
	// a value that is not a positive integer means the default).
	RayJobStatusCheckTimeout time.Duration
	// LoginShell runs Ray containers' commands in a login shell, bash -l
	// (ENABLE_LOGIN_SHELL; off unless "true").
	LoginShell bool
	// ZeroDowntime enables zero-downtime RayService upgrades
	// (ENABLE_ZERO_DOWNTIME; on unless "false").
	ZeroDowntime bool
	// ClusterDomain is the cluster's DNS domain (CLUSTER_DOMAIN; default cluster.local).
	ClusterDomain string
	// Webhooks serves the validating webhooks (ENABLE_WEBHOOKS; off unless "true").
	Webhooks bool
	// DeterministicHeadPodName names the head Pod <cluster>-head instead of
	// generating a name (ENABLE_DETERMINISTIC_HEAD_POD_NAME; off unless "true").
	DeterministicHeadPodName bool
}

// DefaultKnobs returns the knobs of an empty environment.
func DefaultKnobs() Knobs {
	k, _ := LoadKnobs(func(string) (string, bool) { return "", false })
	return k
}

// LoadKnobs reads every knob through lookup with KubeRay's parsing rules:
// booleans compare case-insensitively with "true" (off by default) or
// "false" (on by default), and an integer that does not parse falls back to
// its default. Such a fallback is reported in warnings, not as an error,
// because KubeRay accepts it silently.
func LoadKnobs(lookup LookupFunc) (Knobs, []string) {
	r := knobReader{lookup: lookup}
	k := Knobs{
		RayClusterRequeue:                     r.seconds(EnvRayClusterDefaultRequeueSeconds, DefaultRayClusterRequeue),
		GCSFTRedisCleanup:                     r.onUnlessFalse(EnvEnableGCSFTRedisCleanup),
		DeleteRayJobCRAfterJobFinishes:        r.offUnlessTrue(EnvDeleteRayJobCRAfterJobFinishes),
		RayHeadClusterIPService:               r.offUnlessTrue(EnvEnableRayHeadClusterIPService),
		InitContainerInjection:                r.onUnlessFalse(EnvEnableInitContainerInjection),
		ProbesInjection:                       r.onUnlessFalse(EnvEnableProbesInjection),
		RandomPodDelete:                       r.offUnlessTrue(EnvEnableRandomPodDelete),
		IngressOnOpenShift:                    r.offUnlessTrue(EnvUseIngressOnOpenShift),
		RayJobDeploymentStatusTransitionGrace: r.seconds(EnvRayJobDeploymentStatusTransitionGrace, DefaultRayJobDeploymentStatusTransition),
		RayJobStatusCheckTimeout:              r.positiveSeconds(EnvRayJobStatusCheckTimeout, DefaultRayJobStatusCheckTimeout),
		LoginShell:                            r.offUnlessTrue(EnvEnableLoginShell),
		ZeroDowntime:                          r.onUnlessFalse(EnvEnableZeroDowntime),
		ClusterDomain:                         r.stringOr(EnvClusterDomain, DefaultClusterDomain),
		Webhooks:                              r.offUnlessTrue(EnvEnableWebhooks),
		DeterministicHeadPodName:              r.offUnlessTrue(EnvEnableDeterministicHeadPodName),
	}
	return k, r.warnings
}

type knobReader struct {
	lookup   LookupFunc
	warnings []string
}

func (r *knobReader) get(key string) string {
	v, _ := r.lookup(key)
	return v
}

func (r *knobReader) offUnlessTrue(key string) bool {
	return strings.EqualFold(r.get(key), "true")
}

func (r *knobReader) onUnlessFalse(key string) bool {
	return !strings.EqualFold(r.get(key), "false")
}

func (r *knobReader) stringOr(key, def string) string {
	if v := r.get(key); v != "" {
		return v
	}
	return def
}

// seconds parses an integer number of seconds as KubeRay does (strconv.Atoi,
// so no sign-free check): anything unparsable yields def.
func (r *knobReader) seconds(key string, def time.Duration) time.Duration {
	v, set := r.lookup(key)
	if !set {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		r.warnings = append(r.warnings, fmt.Sprintf("%s=%q is not an integer number of seconds; using %v", key, v, def))
		return def
	}
	return time.Duration(n) * time.Second
}

// positiveSeconds is seconds for a knob that KubeRay also resets to its
// default when it is zero or negative.
func (r *knobReader) positiveSeconds(key string, def time.Duration) time.Duration {
	d := r.seconds(key, def)
	if d <= 0 {
		r.warnings = append(r.warnings, fmt.Sprintf("%s=%q is not a positive number of seconds; using %v", key, r.get(key), def))
		return def
	}
	return d
}
