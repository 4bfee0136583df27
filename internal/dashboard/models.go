package dashboard

import rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"

// RuntimeEnv is a Ray runtime environment (pip, env_vars, working_dir, ...).
// It stays an open map because Ray accepts plugins with any keys.
type RuntimeEnv map[string]any

// JobInfo is what GET /api/jobs/{id} and GET /api/jobs/ return for a job
// (Ray's JobDetails model).
type JobInfo struct {
	// Type is SUBMISSION for jobs submitted through the API, DRIVER otherwise.
	Type         string          `json:"type,omitempty"`
	JobID        string          `json:"job_id,omitempty"`
	SubmissionID string          `json:"submission_id,omitempty"`
	JobStatus    rayv1.JobStatus `json:"status,omitempty"`
	Entrypoint   string          `json:"entrypoint,omitempty"`
	Message      string          `json:"message,omitempty"`
	ErrorType    *string         `json:"error_type,omitempty"`
	// StartTime and EndTime are Unix times in milliseconds; 0 means unset.
	StartTime  uint64            `json:"start_time,omitempty"`
	EndTime    uint64            `json:"end_time,omitempty"`
	Metadata   map[string]string `json:"metadata,omitempty"`
	RuntimeEnv RuntimeEnv        `json:"runtime_env,omitempty"`

	DriverInfo             *DriverInfo `json:"driver_info,omitempty"`
	DriverAgentHTTPAddress string      `json:"driver_agent_http_address,omitempty"`
	DriverNodeID           string      `json:"driver_node_id,omitempty"`
	DriverExitCode         *int        `json:"driver_exit_code,omitempty"`

	// The entrypoint reservations are part of Ray's job record; Ray 2.60's
	// REST answer leaves them out, so they are usually zero here.
	EntrypointNumCPUs   float64            `json:"entrypoint_num_cpus,omitempty"`
	EntrypointNumGPUs   float64            `json:"entrypoint_num_gpus,omitempty"`
	EntrypointMemory    int64              `json:"entrypoint_memory,omitempty"`
	EntrypointResources map[string]float64 `json:"entrypoint_resources,omitempty"`
}

// DriverInfo describes the driver process of a job.
type DriverInfo struct {
	ID            string `json:"id,omitempty"`
	NodeIPAddress string `json:"node_ip_address,omitempty"`
	PID           string `json:"pid,omitempty"`
}

// JobSubmitRequest is the body of POST /api/jobs/.
type JobSubmitRequest struct {
	Entrypoint string `json:"entrypoint"`
	// SubmissionID makes submission idempotent: Ray refuses a second job with
	// the same id, and the RayJob controller relies on that.
	SubmissionID        string             `json:"submission_id,omitempty"`
	RuntimeEnv          RuntimeEnv         `json:"runtime_env,omitempty"`
	Metadata            map[string]string  `json:"metadata,omitempty"`
	EntrypointNumCPUs   float32            `json:"entrypoint_num_cpus,omitempty"`
	EntrypointNumGPUs   float32            `json:"entrypoint_num_gpus,omitempty"`
	EntrypointResources map[string]float32 `json:"entrypoint_resources,omitempty"`
}

// jobSubmitResponse is the body of a successful POST /api/jobs/.
type jobSubmitResponse struct {
	JobID        string `json:"job_id"`
	SubmissionID string `json:"submission_id"`
}

// jobStopResponse is the body of POST /api/jobs/{id}/stop.
type jobStopResponse struct {
	Stopped bool `json:"stopped"`
}

// jobLogsResponse is the body of GET /api/jobs/{id}/logs.
type jobLogsResponse struct {
	Logs string `json:"logs"`
}

// ServeDeploymentStatus is the status of one Serve deployment.
type ServeDeploymentStatus struct {
	Name    string `json:"name,omitempty"`
	Status  string `json:"status,omitempty"`
	Message string `json:"message,omitempty"`
}

// ServeApplicationStatus is the status of one Serve application and its
// deployments, keyed by deployment name.
type ServeApplicationStatus struct {
	Name        string                           `json:"name,omitempty"`
	Status      string                           `json:"status"`
	Message     string                           `json:"message,omitempty"`
	Deployments map[string]ServeDeploymentStatus `json:"deployments"`
}

// ServeDeploymentDetails is a deployment as GET /api/serve/applications/
// describes it.
type ServeDeploymentDetails struct {
	ServeDeploymentStatus
	RoutePrefix string `json:"route_prefix,omitempty"`
}

// ServeApplicationDetails is an application as GET /api/serve/applications/
// describes it.
type ServeApplicationDetails struct {
	ServeApplicationStatus
	RoutePrefix string                            `json:"route_prefix,omitempty"`
	DocsPath    string                            `json:"docs_path,omitempty"`
	Deployments map[string]ServeDeploymentDetails `json:"deployments"`
}

// ServeDetails is the body of GET /api/serve/applications/: every
// declaratively deployed application, keyed by application name.
type ServeDetails struct {
	Applications map[string]ServeApplicationDetails `json:"applications"`
	DeployMode   string                             `json:"deploy_mode,omitempty"`
	// TargetCapacity is the target_capacity of the last config applied, in
	// percent; nil when none was set.
	TargetCapacity *float64 `json:"target_capacity,omitempty"`
}

// ApplicationStatuses reduces the details to the statuses RayService compares.
func (d *ServeDetails) ApplicationStatuses() map[string]*ServeApplicationStatus {
	out := make(map[string]*ServeApplicationStatus, len(d.Applications))
	for name, app := range d.Applications {
		status := app.ServeApplicationStatus
		status.Deployments = make(map[string]ServeDeploymentStatus, len(app.Deployments))
		for depName, dep := range app.Deployments {
			status.Deployments[depName] = dep.ServeDeploymentStatus
		}
		out[name] = &status
	}
	return out
}
