package raypod

import (
	"encoding/json"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// Keys of rayStartParams the operator reads or fills in.
const (
	paramPort                     = "port"
	paramAddress                  = "address"
	paramDashboardHost            = "dashboard-host"
	paramDashboardPort            = "dashboard-port"
	paramDashboardAgentListenPort = "dashboard-agent-listen-port"
	paramMetricsExportPort        = "metrics-export-port"
	paramBlock                    = "block"
	paramNoMonitor                = "no-monitor"
	paramNumCPUs                  = "num-cpus"
	paramMemory                   = "memory"
	paramNumGPUs                  = "num-gpus"
	paramResources                = "resources"
	paramLabels                   = "labels"
	paramPlasmaDirectory          = "plasma-directory"
	paramRedisPassword            = "redis-password"
	paramRedisUsername            = "redis-username"
)

// explicitBoolParams are `ray start` flags that take an explicit true/false
// value; every other flag whose value is "true" or "false" is a switch.
var explicitBoolParams = []string{"log-color", "include-dashboard", "include-log-monitor"}

// acceleratorRayResources maps container resource names of accelerators Ray
// does not detect by itself to the Ray resource they provide.
var acceleratorRayResources = map[corev1.ResourceName]string{
	"aws.amazon.com/neuroncore": "neuron_cores",
	"google.com/tpu":            "TPU",
}

var migResource = regexp.MustCompile(`nvidia\.com/mig-\d+g\.\d+gb$`)

// isGPUResource reports whether a container resource name is a GPU:
// "*gpu" (nvidia.com/gpu, amd.com/gpu) or an NVIDIA MIG slice.
func isGPUResource(name string) bool {
	return strings.HasSuffix(name, "gpu") || migResource.MatchString(name)
}

// HeadPort is the GCS port workers and drivers connect to: the head's
// rayStartParams "port", or 6379.
func HeadPort(cluster *rayv1.RayCluster) string {
	if p, ok := cluster.Spec.HeadGroupSpec.RayStartParams[paramPort]; ok {
		return p
	}
	return strconv.Itoa(rayv1.DefaultGcsServerPort)
}

// applyGroupResources lets the group's top-level `resources` override the
// matching rayStartParams: cpu, memory and GPUs become their own flags,
// everything else goes into the --resources JSON.
func applyGroupResources(params map[string]string, groupResources map[string]string) {
	custom := map[string]float64{}
	for name, value := range groupResources {
		q, err := resource.ParseQuantity(value)
		if err != nil {
			// Nothing rejects an unparsable quantity here: KubeRay's validation
			// has no such rule, and a drop-in must accept what it accepts. The
			// entry is skipped, as docs/raycluster.md says.
			continue
		}
		switch lower := strings.ToLower(name); {
		case lower == string(corev1.ResourceCPU):
			params[paramNumCPUs] = strconv.FormatInt(q.Value(), 10)
		case lower == string(corev1.ResourceMemory):
			params[paramMemory] = strconv.FormatInt(q.Value(), 10)
		case isGPUResource(lower):
			params[paramNumGPUs] = strconv.FormatInt(q.Value(), 10)
		default:
			custom[name] = q.AsApproximateFloat64()
		}
	}
	if len(custom) > 0 {
		params[paramResources] = quoteResources(custom)
	}
}

// applyGroupLabels sets --labels from the group's top-level `labels`, sorted
// by key.
func applyGroupLabels(params map[string]string, groupLabels map[string]string) {
	if len(groupLabels) == 0 {
		return
	}
	pairs := make([]string, 0, len(groupLabels))
	for _, k := range slices.Sorted(maps.Keys(groupLabels)) {
		pairs = append(pairs, k+"="+groupLabels[k])
	}
	params[paramLabels] = strings.Join(pairs, ",")
}

// setDefaultParams fills in the flags KubeRay always passes: the worker's
// --address, the head's --dashboard-host, --metrics-export-port, --block and
// --dashboard-agent-listen-port.
func setDefaultParams(params map[string]string, nodeType rayv1.RayNodeType, headAddress string) {
	if nodeType == rayv1.WorkerNode {
		setIfMissing(params, paramAddress, headAddress)
	} else {
		setIfMissing(params, paramDashboardHost, "0.0.0.0")
	}
	setIfMissing(params, paramMetricsExportPort, strconv.Itoa(rayv1.DefaultMetricsPort))
	params[paramBlock] = "true"
	setIfMissing(params, paramDashboardAgentListenPort, strconv.Itoa(rayv1.DefaultDashboardAgentListenPort))
}

// applyContainerResources derives --num-cpus (limit, else request),
// --memory (limit), --num-gpus and the first custom accelerator from the Ray
// container's resources, unless rayStartParams already set them.
func applyContainerResources(params map[string]string, res corev1.ResourceRequirements) {
	if _, ok := params[paramNumCPUs]; !ok {
		if cpu := res.Limits[corev1.ResourceCPU]; !cpu.IsZero() {
			params[paramNumCPUs] = strconv.FormatInt(cpu.Value(), 10)
		} else if cpu := res.Requests[corev1.ResourceCPU]; !cpu.IsZero() {
			params[paramNumCPUs] = strconv.FormatInt(cpu.Value(), 10)
		}
	}
	if _, ok := params[paramMemory]; !ok {
		if mem := res.Limits[corev1.ResourceMemory]; !mem.IsZero() {
			params[paramMemory] = strconv.FormatInt(mem.Value(), 10)
		}
	}
	applyAcceleratorLimits(params, res.Limits)
}

// applyAcceleratorLimits walks the limits in name order: the first GPU sets
// --num-gpus, the first custom accelerator is added to --resources unless
// --resources already names one.
func applyAcceleratorLimits(params map[string]string, limits corev1.ResourceList) {
	if len(limits) == 0 {
		return
	}
	custom, err := parseResources(params[paramResources])
	if err != nil {
		return // a malformed --resources is passed through untouched
	}
	haveAccelerator := false
	for _, rayName := range acceleratorRayResources {
		if _, ok := custom[rayName]; ok {
			haveAccelerator = true
		}
	}
	for _, name := range slices.Sorted(maps.Keys(limits)) {
		q := limits[name]
		if q.IsZero() {
			continue
		}
		if _, ok := params[paramNumGPUs]; !ok && isGPUResource(string(name)) {
			params[paramNumGPUs] = strconv.FormatInt(q.Value(), 10)
		}
		if rayName, ok := acceleratorRayResources[name]; ok && !haveAccelerator {
			haveAccelerator = true
			if _, exists := custom[rayName]; !exists {
				custom[rayName] = q.AsApproximateFloat64()
				params[paramResources] = quoteResources(custom)
			}
		}
	}
}

// parseResources reads a --resources value, which users may wrap in single,
// double or back quotes.
func parseResources(s string) (map[string]float64, error) {
	out := map[string]float64{}
	s = strings.Trim(s, "'\"` ")
	if s == "" {
		return out, nil
	}
	if err := json.Unmarshal([]byte(s), &out); err != nil {
		return nil, err
	}
	return out, nil
}

// quoteResources renders a --resources value: single-quoted JSON with sorted keys.
func quoteResources(r map[string]float64) string {
	b, _ := json.Marshal(r) // a map of float64 always marshals
	return "'" + string(b) + "'"
}

// renderFlags turns rayStartParams into `ray start` flags in key order. A
// "true" switch becomes "--key", a "false" switch is dropped, anything else
// is "--key=value". Each flag is padded with a space on both sides, exactly
// as KubeRay renders it.
func renderFlags(params map[string]string) string {
	var b strings.Builder
	for _, key := range slices.Sorted(maps.Keys(params)) {
		value := params[key]
		lower := strings.ToLower(value)
		isBool := lower == "true" || lower == "false"
		switch {
		case isBool && !slices.Contains(explicitBoolParams, key):
			if lower == "true" {
				b.WriteString(" --" + key + " ")
			}
		default:
			b.WriteString(" --" + key + "=" + value + " ")
		}
	}
	return b.String()
}

// rayStartCommand is the generated `ray start` command line.
func rayStartCommand(nodeType rayv1.RayNodeType, params map[string]string) string {
	if nodeType == rayv1.HeadNode {
		return "ray start --head " + renderFlags(params)
	}
	return "ray start " + renderFlags(params)
}

func setIfMissing(m map[string]string, key, value string) {
	if _, ok := m[key]; !ok {
		m[key] = value
	}
}
