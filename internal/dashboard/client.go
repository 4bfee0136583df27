package dashboard

import "context"

// JobClient is the Ray Job Submission API.
type JobClient interface {
	// SubmitJob starts a job and returns its submission id.
	SubmitJob(ctx context.Context, req *JobSubmitRequest) (string, error)
	// GetJobInfo returns a job by submission id; ErrNotFound if Ray does not
	// know it.
	GetJobInfo(ctx context.Context, jobID string) (*JobInfo, error)
	// ListJobs returns every job the cluster knows.
	ListJobs(ctx context.Context) ([]JobInfo, error)
	// GetJobLog returns the job's driver log.
	GetJobLog(ctx context.Context, jobID string) (string, error)
	// StopJob asks Ray to stop a job. Stopping a job that already ended is not
	// an error.
	StopJob(ctx context.Context, jobID string) error
	// DeleteJob removes a finished job's record and logs.
	DeleteJob(ctx context.Context, jobID string) error
}

// ServeClient is the Ray Serve REST API (multi-application, declarative).
type ServeClient interface {
	// UpdateDeployments puts a Serve config (JSON) on the cluster.
	UpdateDeployments(ctx context.Context, configJSON []byte) error
	// GetServeDetails returns every declaratively deployed application.
	GetServeDetails(ctx context.Context) (*ServeDetails, error)
	// GetMultiApplicationStatus returns each application's status by name.
	GetMultiApplicationStatus(ctx context.Context) (map[string]*ServeApplicationStatus, error)
}

// Client is everything the controllers ask of a Ray dashboard.
type Client interface {
	JobClient
	ServeClient
}

// ClientProvider returns a Client for the dashboard at baseURL (host:port or
// a full http(s) URL). authToken, when not empty, is sent on every request.
// Reconcilers hold a ClientProvider so that tests can hand them a fake.
type ClientProvider func(baseURL, authToken string) (Client, error)
