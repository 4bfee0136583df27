// Package dashboardtest provides an in-process Ray dashboard for controller
// tests: a Fake that implements dashboard.Client and whose jobs the test
// drives.
package dashboardtest

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sync"

	"k8s.io/utils/clock"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/dashboard"
)

// Op names a Client method, for SetError.
type Op string

// The Client methods a test can make fail.
const (
	OpSubmitJob                 Op = "SubmitJob"
	OpGetJobInfo                Op = "GetJobInfo"
	OpListJobs                  Op = "ListJobs"
	OpGetJobLog                 Op = "GetJobLog"
	OpStopJob                   Op = "StopJob"
	OpDeleteJob                 Op = "DeleteJob"
	OpUpdateDeployments         Op = "UpdateDeployments"
	OpGetServeDetails           Op = "GetServeDetails"
	OpGetMultiApplicationStatus Op = "GetMultiApplicationStatus"
)

// Fake is a Ray dashboard in memory. Submitted jobs start PENDING and stay in
// whatever status the test sets; StopJob moves a running job to STOPPED.
// Jobs start and end at its clock's time, as Ray stamps them. Every cluster
// a Provider hands out shares the same jobs. It is safe for concurrent use.
type Fake struct {
	mu           sync.Mutex
	clock        clock.PassiveClock
	jobs         map[string]*dashboard.JobInfo
	order        []string
	logs         map[string]string
	submissions  []dashboard.JobSubmitRequest
	errs         map[Op]error
	serveDetails *dashboard.ServeDetails
	serveConfigs [][]byte
	urls         []string
	tokens       []string
}

var _ dashboard.Client = (*Fake)(nil)

// NewFake returns a dashboard with no jobs and no Serve applications, on the
// real clock.
func NewFake() *Fake {
	return NewFakeWithClock(clock.RealClock{})
}

// NewFakeWithClock is NewFake on c: a test that drives the operator's clock
// passes the same one, so that a job's end is not already long past.
func NewFakeWithClock(c clock.PassiveClock) *Fake {
	return &Fake{
		clock: c,
		jobs:  map[string]*dashboard.JobInfo{},
		logs:  map[string]string{},
		errs:  map[Op]error{},
	}
}

// Provider returns a ClientProvider that hands out f for any cluster and
// records the URLs and tokens it was asked for.
func (f *Fake) Provider() dashboard.ClientProvider {
	return func(baseURL, authToken string) (dashboard.Client, error) {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.urls = append(f.urls, baseURL)
		f.tokens = append(f.tokens, authToken)
		return f, nil
	}
}

// ProvidedFor returns the base URLs and tokens Provider was called with.
func (f *Fake) ProvidedFor() (urls, tokens []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.urls), slices.Clone(f.tokens)
}

// SetError makes op fail with err until it is set back to nil.
func (f *Fake) SetError(op Op, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.errs[op] = err
}

// AddJob puts a job on the dashboard as if it had been submitted elsewhere.
func (f *Fake) AddJob(info dashboard.JobInfo) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.putLocked(info)
}

// SetJobStatus changes a job's status and message; it reports false when the
// job does not exist. A terminal status sets the end time.
func (f *Fake) SetJobStatus(jobID string, status rayv1.JobStatus, message string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	job, ok := f.jobs[jobID]
	if !ok {
		return false
	}
	job.JobStatus = status
	job.Message = message
	if rayv1.IsJobTerminal(status) && job.EndTime == 0 {
		job.EndTime = f.nowMillis()
	}
	return true
}

// UpdateJob applies mutate to a job under the dashboard's lock, so that a
// test moves a job along (status, times) atomically with respect to the
// operator's calls; it reports false when the job does not exist. The
// submission id cannot change.
func (f *Fake) UpdateJob(jobID string, mutate func(*dashboard.JobInfo)) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	job, ok := f.jobs[jobID]
	if !ok {
		return false
	}
	id := job.SubmissionID
	mutate(job)
	job.SubmissionID = id
	return true
}

// SetLogs sets what GetJobLog returns for a job.
func (f *Fake) SetLogs(jobID, logs string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.logs[jobID] = logs
}

// ForgetJob removes a job as a restarted head would have, without the
// terminal-status check DeleteJob makes.
func (f *Fake) ForgetJob(jobID string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.removeLocked(jobID)
}

// Job returns a copy of a job and whether it exists.
func (f *Fake) Job(jobID string) (dashboard.JobInfo, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	job, ok := f.jobs[jobID]
	if !ok {
		return dashboard.JobInfo{}, false
	}
	return *job, true
}

// Submissions returns every SubmitJob request, accepted or not, in order.
func (f *Fake) Submissions() []dashboard.JobSubmitRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.submissions)
}

// SetServeDetails sets what GetServeDetails returns.
func (f *Fake) SetServeDetails(details *dashboard.ServeDetails) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.serveDetails = details
}

// ServeConfigs returns every config UpdateDeployments received, in order.
func (f *Fake) ServeConfigs() [][]byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.serveConfigs)
}

// SubmitJob records req and adds a PENDING job; a taken submission id fails
// with dashboard.ErrSubmissionIDInUse, as Ray does.
func (f *Fake) SubmitJob(_ context.Context, req *dashboard.JobSubmitRequest) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.submissions = append(f.submissions, *req)
	if err := f.errs[OpSubmitJob]; err != nil {
		return "", err
	}
	id := req.SubmissionID
	if id == "" {
		id = fmt.Sprintf("raysubmit_%d", len(f.submissions))
	}
	if _, ok := f.jobs[id]; ok {
		return id, fmt.Errorf("job %s: %w", id, dashboard.ErrSubmissionIDInUse)
	}
	f.putLocked(dashboard.JobInfo{
		Type:                "SUBMISSION",
		SubmissionID:        id,
		JobStatus:           rayv1.JobStatusPending,
		Entrypoint:          req.Entrypoint,
		Metadata:            req.Metadata,
		RuntimeEnv:          req.RuntimeEnv,
		StartTime:           f.nowMillis(),
		EntrypointNumCPUs:   float64(req.EntrypointNumCPUs),
		EntrypointNumGPUs:   float64(req.EntrypointNumGPUs),
		EntrypointResources: toFloat64(req.EntrypointResources),
	})
	return id, nil
}

// GetJobInfo returns a copy of the job, or dashboard.ErrNotFound.
func (f *Fake) GetJobInfo(_ context.Context, jobID string) (*dashboard.JobInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.errs[OpGetJobInfo]; err != nil {
		return nil, err
	}
	job, ok := f.jobs[jobID]
	if !ok {
		return nil, notFound(http.MethodGet, jobID, "")
	}
	out := *job
	return &out, nil
}

// ListJobs returns every job in submission order.
func (f *Fake) ListJobs(context.Context) ([]dashboard.JobInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.errs[OpListJobs]; err != nil {
		return nil, err
	}
	out := make([]dashboard.JobInfo, 0, len(f.order))
	for _, id := range f.order {
		out = append(out, *f.jobs[id])
	}
	return out, nil
}

// GetJobLog returns what SetLogs set, or dashboard.ErrNotFound.
func (f *Fake) GetJobLog(_ context.Context, jobID string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.errs[OpGetJobLog]; err != nil {
		return "", err
	}
	if _, ok := f.jobs[jobID]; !ok {
		return "", notFound(http.MethodGet, jobID, "/logs")
	}
	return f.logs[jobID], nil
}

// StopJob moves a job that has not ended to STOPPED.
func (f *Fake) StopJob(_ context.Context, jobID string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.errs[OpStopJob]; err != nil {
		return err
	}
	job, ok := f.jobs[jobID]
	if !ok {
		return notFound(http.MethodPost, jobID, "/stop")
	}
	if !rayv1.IsJobTerminal(job.JobStatus) {
		job.JobStatus = rayv1.JobStatusStopped
		job.EndTime = f.nowMillis()
	}
	return nil
}

// DeleteJob removes an ended job; Ray refuses to delete a running one.
func (f *Fake) DeleteJob(_ context.Context, jobID string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.errs[OpDeleteJob]; err != nil {
		return err
	}
	job, ok := f.jobs[jobID]
	if !ok {
		return notFound(http.MethodDelete, jobID, "")
	}
	if !rayv1.IsJobTerminal(job.JobStatus) {
		return fmt.Errorf("job %s is %s, not in a terminal state", jobID, job.JobStatus)
	}
	f.removeLocked(jobID)
	return nil
}

// UpdateDeployments records the config.
func (f *Fake) UpdateDeployments(_ context.Context, configJSON []byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.errs[OpUpdateDeployments]; err != nil {
		return err
	}
	f.serveConfigs = append(f.serveConfigs, slices.Clone(configJSON))
	return nil
}

// GetServeDetails returns what SetServeDetails set, or no applications.
func (f *Fake) GetServeDetails(context.Context) (*dashboard.ServeDetails, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.errs[OpGetServeDetails]; err != nil {
		return nil, err
	}
	if f.serveDetails == nil {
		return &dashboard.ServeDetails{Applications: map[string]dashboard.ServeApplicationDetails{}}, nil
	}
	out := *f.serveDetails
	return &out, nil
}

// GetMultiApplicationStatus derives statuses from GetServeDetails.
func (f *Fake) GetMultiApplicationStatus(ctx context.Context) (map[string]*dashboard.ServeApplicationStatus, error) {
	f.mu.Lock()
	err := f.errs[OpGetMultiApplicationStatus]
	f.mu.Unlock()
	if err != nil {
		return nil, err
	}
	details, err := f.GetServeDetails(ctx)
	if err != nil {
		return nil, err
	}
	return details.ApplicationStatuses(), nil
}

// putLocked adds or replaces a job, keeping submission order.
func (f *Fake) putLocked(info dashboard.JobInfo) {
	id := info.SubmissionID
	if id == "" {
		id = info.JobID
	}
	if _, ok := f.jobs[id]; !ok {
		f.order = append(f.order, id)
	}
	f.jobs[id] = &info
}

// removeLocked removes a job and its logs.
func (f *Fake) removeLocked(jobID string) {
	delete(f.jobs, jobID)
	delete(f.logs, jobID)
	f.order = slices.DeleteFunc(f.order, func(id string) bool { return id == jobID })
}

// notFound is the error the real client makes of Ray's 404 for method on
// the job's path (with sub-resource sub): a *dashboard.HTTPError matching
// dashboard.ErrNotFound.
func notFound(method, jobID, sub string) error {
	path := "/api/jobs/" + url.PathEscape(jobID) + sub
	return &dashboard.HTTPError{Method: method, Path: path, StatusCode: http.StatusNotFound,
		Body: fmt.Sprintf("Job %s does not exist", jobID)}
}

// toFloat64 widens entrypoint resources to the JobInfo type.
func toFloat64(in map[string]float32) map[string]float64 {
	if in == nil {
		return nil
	}
	out := make(map[string]float64, len(in))
	for k, v := range in {
		out[k] = float64(v)
	}
	return out
}

// nowMillis is the clock's time as Ray's millisecond timestamps.
func (f *Fake) nowMillis() uint64 {
	return uint64(f.clock.Now().UnixMilli()) //nolint:gosec // after 1970
}
