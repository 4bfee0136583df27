package submitter

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	utilversion "k8s.io/apimachinery/pkg/util/version"
	"sigs.k8s.io/yaml"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/raypod"
)

// gcsHealthPath is the dashboard endpoint that answers "success" once the
// GCS is reachable; the submitter waits for it before talking to Ray.
const gcsHealthPath = "api/gcs_healthz"

// healthCheckTimeoutSeconds bounds each probe of gcsHealthPath.
const healthCheckTimeoutSeconds = 10

// gcsHealthCommandPattern is KubeRay's GCS health check of the submitter
// (URL, timeout in seconds): Python's urllib, which every Ray image has
// (unlike wget or curl), exiting 0 only when the answer says success.
const gcsHealthCommandPattern = `python -c "import urllib.request; r=urllib.request.urlopen('%s', timeout=%d); exit(0 if b'success' in r.read() else 1)"`

// minMetadataRayVersion is the first Ray release whose CLI has --metadata-json.
var minMetadataRayVersion = utilversion.MustParseGeneric("2.6.0")

// Command returns the shell words the submitter runs in mode (K8sJobMode or
// SidecarMode). Joined with spaces it is one bash script that:
//
//  1. waits until the dashboard reports a healthy GCS (in SidecarMode, and
//     the head's dashboard agent a healthy raylet: agentHealthURL);
//  2. submits the entrypoint under the RayJob's submission id; when the
//     submitter may run again (a K8sJobMode Pod retried by its batch Job, or
//     a SidecarMode container that restarts on failure, sidecarRestarts:
//     the SidecarSubmitterRestart gate), only when `ray job status` does not
//     know the id yet, and with --no-wait;
//  3. in that case, follows the job's logs until it ends (`ray job logs
//     --follow`), which a restarted submitter simply attaches to again.
//
// A SidecarMode container that never restarts runs the plain blocking
// `ray job submit`.
func Command(job *rayv1.RayJob, mode rayv1.JobSubmissionMode, sidecarRestarts bool) ([]string, error) {
	address, healthURL, err := addresses(job, mode)
	if err != nil {
		return nil, err
	}
	submitFlags, err := submitOptions(job)
	if err != nil {
		return nil, err
	}
	jobID := job.Status.JobID
	idempotent := mode == rayv1.K8sJobMode || (mode == rayv1.SidecarMode && sidecarRestarts)

	cmd := waitForGCS(address, healthURL, agentHealthURL(job, mode))
	if idempotent {
		cmd = append(cmd, "if", "!", "ray", "job", "status", "--address", address, jobID, ">/dev/null", "2>&1", ";", "then")
	}
	cmd = append(cmd, "ray", "job", "submit", "--address", address)
	if idempotent {
		cmd = append(cmd, "--no-wait")
	}
	cmd = append(cmd, submitFlags...)
	cmd = append(cmd, "--", strings.TrimSpace(job.Spec.Entrypoint), ";")
	if idempotent {
		cmd = append(cmd, "fi", ";", "ray", "job", "logs", "--address", address, "--follow", jobID)
	}
	return cmd, nil
}

// addresses returns the dashboard address the ray CLI uses and the URL of the
// GCS health endpoint for mode.
func addresses(job *rayv1.RayJob, mode rayv1.JobSubmissionMode) (address, healthURL string, err error) {
	switch mode {
	case rayv1.K8sJobMode:
		address = job.Status.DashboardURL
		if !strings.HasPrefix(address, "http://") && !strings.HasPrefix(address, "https://") {
			address = "http://" + address
		}
		return address, address + "/" + gcsHealthPath, nil
	case rayv1.SidecarMode:
		if job.Spec.RayClusterSpec == nil {
			return "", "", fmt.Errorf("SidecarMode needs spec.rayClusterSpec")
		}
		port := rayv1.DashboardPort(job.Spec.RayClusterSpec)
		address = "http://127.0.0.1:" + strconv.Itoa(int(port))
		return address, fmt.Sprintf("http://localhost:%d/%s", port, gcsHealthPath), nil
	default:
		return "", "", fmt.Errorf("submission mode %q has no submitter command", mode)
	}
}

// waitForGCS returns a loop that polls the GCS health endpoint every two
// seconds with gcsHealthCommandPattern, and, when agentURL is set, the head's
// dashboard agent too.
func waitForGCS(address, healthURL, agentURL string) []string {
	cond := []string{fmt.Sprintf(gcsHealthCommandPattern, healthURL, healthCheckTimeoutSeconds), ">/dev/null", "2>&1"}
	what := "Ray Dashboard GCS"
	if agentURL != "" {
		cond = append(cond, "&&", fmt.Sprintf(gcsHealthCommandPattern, agentURL, healthCheckTimeoutSeconds), ">/dev/null", "2>&1")
		what += " and the head's dashboard agent"
	}
	cmd := append([]string{"until"}, cond...)
	return append(cmd, ";",
		"do", "echo", strconv.Quote("Waiting for "+what+" to become healthy at "+address+" ..."), ";",
		"sleep", "2", ";", "done", ";",
	)
}

// agentHealthURL is, in SidecarMode, the raylet health endpoint of the head's
// dashboard agent (rayStartParams dashboard-agent-listen-port, else 52365);
// empty in K8sJobMode. Ray's job server hands every submission to the head's
// agent and refuses it ("No available agent to submit job") when the agent
// has not registered within ten seconds, which a loaded head Pod can miss
// right after its GCS turns healthy: the sidecar, on the head itself, waits
// for the agent too (not KubeRay's: its sidecar waits for the GCS only). A
// K8sJobMode submitter is another Pod, retried by its Job.
func agentHealthURL(job *rayv1.RayJob, mode rayv1.JobSubmissionMode) string {
	if mode != rayv1.SidecarMode || job.Spec.RayClusterSpec == nil {
		return ""
	}
	port := raypod.DashboardAgentPort(job.Spec.RayClusterSpec.HeadGroupSpec.RayStartParams)
	return fmt.Sprintf("http://localhost:%d/%s", port, raypod.RayletHealthPath)
}

// submitOptions returns the `ray job submit` flags that carry the RayJob's
// runtime env, metadata, submission id and entrypoint resources.
func submitOptions(job *rayv1.RayJob) ([]string, error) {
	var flags []string
	runtimeEnv, err := RuntimeEnvJSON(job.Spec.RuntimeEnvYAML)
	if err != nil {
		return nil, err
	}
	if runtimeEnv != "" {
		flags = append(flags, "--runtime-env-json", strconv.Quote(runtimeEnv))
	}
	if len(job.Spec.Metadata) > 0 {
		metadata, err := metadataJSON(job)
		if err != nil {
			return nil, err
		}
		flags = append(flags, "--metadata-json", strconv.Quote(metadata))
	}
	if job.Status.JobID != "" {
		flags = append(flags, "--submission-id", job.Status.JobID)
	}
	if job.Spec.EntrypointNumCpus > 0 {
		flags = append(flags, "--entrypoint-num-cpus", fmt.Sprintf("%f", job.Spec.EntrypointNumCpus))
	}
	if job.Spec.EntrypointNumGpus > 0 {
		flags = append(flags, "--entrypoint-num-gpus", fmt.Sprintf("%f", job.Spec.EntrypointNumGpus))
	}
	if job.Spec.EntrypointResources != "" {
		flags = append(flags, "--entrypoint-resources", strconv.Quote(job.Spec.EntrypointResources))
	}
	return flags, nil
}

// RuntimeEnvJSON converts the RayJob's runtimeEnvYAML to JSON; empty stays
// empty.
func RuntimeEnvJSON(runtimeEnvYAML string) (string, error) {
	if strings.TrimSpace(runtimeEnvYAML) == "" {
		return "", nil
	}
	out, err := yaml.YAMLToJSON([]byte(runtimeEnvYAML))
	if err != nil {
		return "", fmt.Errorf("runtimeEnvYAML is not valid YAML: %w", err)
	}
	return string(out), nil
}

// metadataJSON serializes spec.metadata, refusing clusters that declare a Ray
// version older than the CLI flag. Without a declared version (or with a
// clusterSelector) the cluster is assumed recent enough.
func metadataJSON(job *rayv1.RayJob) (string, error) {
	if spec := job.Spec.RayClusterSpec; spec != nil && spec.RayVersion != "" {
		v, err := utilversion.ParseGeneric(spec.RayVersion)
		if err != nil {
			return "", fmt.Errorf("parsing rayVersion %q: %w", spec.RayVersion, err)
		}
		if v.LessThan(minMetadataRayVersion) {
			return "", fmt.Errorf("spec.metadata needs Ray 2.6.0 or newer, the cluster declares %s", spec.RayVersion)
		}
	}
	out, err := json.Marshal(job.Spec.Metadata)
	if err != nil {
		return "", fmt.Errorf("encoding spec.metadata: %w", err)
	}
	return string(out), nil
}
