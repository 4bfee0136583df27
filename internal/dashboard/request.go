package dashboard

import (
	"encoding/json"
	"fmt"

	"sigs.k8s.io/yaml"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// NewJobSubmitRequest builds the submission for a RayJob: its entrypoint,
// metadata, runtimeEnvYAML as runtime_env, the entrypoint's CPUs, GPUs and
// custom resources, and status.jobId as the submission id so that a repeated
// submission is refused rather than run twice.
func NewJobSubmitRequest(job *rayv1.RayJob) (*JobSubmitRequest, error) {
	req := &JobSubmitRequest{
		Entrypoint:        job.Spec.Entrypoint,
		SubmissionID:      job.Status.JobID,
		Metadata:          job.Spec.Metadata,
		EntrypointNumCPUs: job.Spec.EntrypointNumCpus,
		EntrypointNumGPUs: job.Spec.EntrypointNumGpus,
	}
	if job.Spec.RuntimeEnvYAML != "" {
		env, err := ParseRuntimeEnvYAML(job.Spec.RuntimeEnvYAML)
		if err != nil {
			return nil, err
		}
		req.RuntimeEnv = env
	}
	if job.Spec.EntrypointResources != "" {
		if err := json.Unmarshal([]byte(job.Spec.EntrypointResources), &req.EntrypointResources); err != nil {
			return nil, fmt.Errorf("entrypointResources is not a JSON map of numbers: %w", err)
		}
	}
	return req, nil
}

// ParseRuntimeEnvYAML parses a RayJob's runtimeEnvYAML.
func ParseRuntimeEnvYAML(text string) (RuntimeEnv, error) {
	var env RuntimeEnv
	if err := yaml.Unmarshal([]byte(text), &env); err != nil {
		return nil, fmt.Errorf("runtimeEnvYAML is not a YAML map: %w", err)
	}
	return env, nil
}
