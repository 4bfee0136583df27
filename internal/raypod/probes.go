package raypod

import (
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/version"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// Probe settings, as in KubeRay.
const (
	readinessInitialDelay    = 10
	readinessTimeout         = 2
	headReadinessTimeout     = 5
	readinessPeriod          = 5
	readinessSuccess         = 1
	readinessFailure         = 10
	serveReadinessFailure    = 1
	livenessInitialDelay     = 30
	livenessTimeout          = 2
	headLivenessTimeout      = 5
	livenessPeriod           = 5
	livenessSuccess          = 1
	livenessFailure          = 120
	gcsHealthPath            = "api/gcs_healthz"
	serveProxyHealthPath     = "-/healthz"
	unifiedHealthPath        = "/api/healthz"
	unifiedHealthMinVersion  = "2.53.0"
	wgetHealthCommandPattern = "wget --tries 1 -T %d -q -O- http://localhost:%d/%s | grep success"
)

// setProbes gives the Ray container KubeRay's readiness and liveness probes
// where the user set none. Ray 2.53 and later expose one HTTP health endpoint
// on the dashboard agent; older versions are checked with wget: the raylet
// (through the dashboard agent) everywhere, GCS (through the dashboard) on
// the head. Workers of RayService clusters also check the Serve proxy before
// they count as ready.
func (b *podBuild) setProbes() {
	c := b.rayContainer()
	agentPort := DashboardAgentPort(b.params)
	checks := []string{fmt.Sprintf(wgetHealthCommandPattern, readinessTimeout, agentPort, RayletHealthPath)}
	if b.nodeType == rayv1.HeadNode {
		dashboardPort := portParam(b.params, paramDashboardPort, rayv1.DefaultDashboardPort)
		// KubeRay passes the readiness failure threshold (10) as this wget timeout.
		checks = append(checks, fmt.Sprintf(wgetHealthCommandPattern, readinessFailure, dashboardPort, gcsHealthPath))
	}
	handler := execHandler(checks)
	if supportsUnifiedHealthCheck(b.cluster.Spec.RayVersion) {
		handler = corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
			Path: unifiedHealthPath,
			Port: intstr.FromInt32(agentPort),
		}}
	}
	isHead := b.nodeType == rayv1.HeadNode
	if c.LivenessProbe == nil {
		c.LivenessProbe = &corev1.Probe{
			ProbeHandler:        handler,
			InitialDelaySeconds: livenessInitialDelay,
			TimeoutSeconds:      pick(isHead, headLivenessTimeout, livenessTimeout),
			PeriodSeconds:       livenessPeriod,
			SuccessThreshold:    livenessSuccess,
			FailureThreshold:    livenessFailure,
		}
	}
	if c.ReadinessProbe == nil {
		c.ReadinessProbe = &corev1.Probe{
			ProbeHandler:        handler,
			InitialDelaySeconds: readinessInitialDelay,
			TimeoutSeconds:      pick(isHead, headReadinessTimeout, readinessTimeout),
			PeriodSeconds:       readinessPeriod,
			SuccessThreshold:    readinessSuccess,
			FailureThreshold:    readinessFailure,
		}
		if b.creator == CreatorRayService && !isHead {
			servePort := containerPort(c, rayv1.ServingPortName, rayv1.DefaultServingPort)
			// KubeRay passes the readiness initial delay (10) as this wget timeout.
			checks = append(checks, fmt.Sprintf(wgetHealthCommandPattern, readinessInitialDelay, servePort, serveProxyHealthPath))
			c.ReadinessProbe.ProbeHandler = execHandler(checks)
			c.ReadinessProbe.FailureThreshold = serveReadinessFailure
		}
	}
}

func execHandler(checks []string) corev1.ProbeHandler {
	return corev1.ProbeHandler{Exec: &corev1.ExecAction{
		Command: []string{"bash", "-c", strings.Join(checks, " && ")},
	}}
}

// RayletHealthPath is the dashboard agent's endpoint that answers "success"
// once its node's raylet is up: the readiness and liveness probes' check
// before Ray 2.53, and the SidecarMode submitter's wait for the head's agent.
const RayletHealthPath = "api/local_raylet_healthz"

// DashboardAgentPort is the dashboard agent's HTTP port of a group with
// rayStartParams params: dashboard-agent-listen-port, else 52365.
func DashboardAgentPort(params map[string]string) int32 {
	return portParam(params, paramDashboardAgentListenPort, rayv1.DefaultDashboardAgentListenPort)
}

// portParam reads a port from rayStartParams, falling back to def when the
// flag is absent or not a number.
func portParam(params map[string]string, key string, def int32) int32 {
	if p, err := strconv.ParseInt(params[key], 10, 32); err == nil {
		return int32(p)
	}
	return def
}

func supportsUnifiedHealthCheck(rayVersion string) bool {
	v, err := version.ParseGeneric(rayVersion)
	if err != nil {
		return false
	}
	return v.AtLeast(version.MustParseGeneric(unifiedHealthMinVersion))
}

// containerPort is the number of the container port called name, or def.
func containerPort(c *corev1.Container, name string, def int32) int32 {
	for _, p := range c.Ports {
		if p.Name == name {
			return p.ContainerPort
		}
	}
	return def
}

func pick(cond bool, a, b int32) int32 {
	if cond {
		return a
	}
	return b
}
