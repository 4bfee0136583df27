package rayjobchaos_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/dashboard"
	"github.com/ray-operator/ray-operator/internal/dashboard/dashboardtest"
	"github.com/ray-operator/ray-operator/internal/testing/testenv"
)

// weatherOps are the dashboard calls the RayJob controller makes, which
// the weather makes fail; job info, asked most, fails most often.
var weatherOps = []dashboardtest.Op{dashboardtest.OpGetJobInfo, dashboardtest.OpSubmitJob, dashboardtest.OpStopJob}

// jobOps are the Jobs API calls; each fails with connection refused on a
// dashboard that does not answer.
var jobOps = []dashboardtest.Op{dashboardtest.OpSubmitJob, dashboardtest.OpGetJobInfo, dashboardtest.OpStopJob,
	dashboardtest.OpListJobs, dashboardtest.OpGetJobLog, dashboardtest.OpDeleteJob}

// transientFaults are the faults a dashboard recovers from; a job that is
// gone is a scripted event instead (lifecycle.vanish), since a 404 is an
// answer the controller acts on.
var transientFaults = []dashboardtest.Fault{dashboardtest.FaultServerError, dashboardtest.FaultTimeout,
	dashboardtest.FaultRefused, dashboardtest.FaultGarbage, dashboardtest.FaultSlow}

// submission is a Ray job coming into being on a dashboard.
type submission struct {
	id, cluster, by string
}

// dashboards are the Ray dashboards of the run: one in-process fake per
// RayCluster, answering from the moment its head Pod runs until the cluster
// is deleted (then the address refuses connections, as a deleted head
// Service's would). The operator reaches them through clients that fail
// with the current weather (transient faults, as the real HTTP client
// reports them) and stop working when their operator is killed; the
// stand-ins for submitters and users reach them directly.
type dashboards struct {
	ns      string
	mu      sync.Mutex
	byURL   map[string]*dashboardtest.Fake
	byName  map[string]*dashboardtest.Fake
	dead    map[string]bool
	faults  map[dashboardtest.Op][]weather
	refused map[dashboardtest.Op]error
	weather map[dashboardtest.Op]weather
	// started are every Ray job that came into being, vanished counts the
	// jobs a dashboard lost, inUse are the ids of the operator's
	// submissions a dashboard refused because it had the id already, lost
	// counts submissions that landed but whose answer was lost.
	started  []submission
	vanished map[string]int
	inUse    []string
	lost     int
	windows  int
	timeouts int
}

// weather is a fault of one dashboard call: the error the real client
// gives for it.
type weather struct {
	fault dashboardtest.Fault
	err   error
}

// weatherJobID is the job id the fault errors are made with: the real client
// refuses an empty one before it sends anything, which would make every
// job call's fault the same "empty job id" error.
const weatherJobID = "rayjob-chaos-weather"

// newDashboards makes the errors of every fault once, with the real HTTP
// client against misbehaving servers (dashboardtest.FaultError).
func newDashboards(ctx context.Context, ns string) (*dashboards, error) {
	d := &dashboards{ns: ns, byURL: map[string]*dashboardtest.Fake{}, byName: map[string]*dashboardtest.Fake{}, dead: map[string]bool{},
		faults: map[dashboardtest.Op][]weather{}, refused: map[dashboardtest.Op]error{},
		weather: map[dashboardtest.Op]weather{}, vanished: map[string]int{}}
	for _, op := range jobOps {
		refused := dashboardtest.FaultError(ctx, dashboardtest.FaultRefused, op, weatherJobID)
		if refused == nil {
			return nil, fmt.Errorf("a refused connection gives %s no error", op)
		}
		d.refused[op] = refused
		if !slices.Contains(weatherOps, op) {
			continue
		}
		// Some faults are no error for some calls (garbage in answer to a
		// call that does not decode): the weather skips those.
		for _, fault := range transientFaults {
			if err := dashboardtest.FaultError(ctx, fault, op, weatherJobID); err != nil {
				d.faults[op] = append(d.faults[op], weather{fault: fault, err: err})
			}
		}
	}
	return d, nil
}

// up makes cluster's dashboard answer (its head Pod runs). A deleted
// cluster's never comes back.
func (d *dashboards) up(cluster string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.dead[cluster] || d.byName[cluster] != nil {
		return
	}
	fake := dashboardtest.NewFake()
	d.byName[cluster], d.byURL[dashboardtest.URLFor(cluster, d.ns)] = fake, fake
}

// down makes cluster's dashboard refuse connections for good.
func (d *dashboards) down(cluster string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.dead[cluster] = true
	delete(d.byName, cluster)
	delete(d.byURL, dashboardtest.URLFor(cluster, d.ns))
}

// fake is cluster's dashboard, nil while it does not answer.
func (d *dashboards) fake(cluster string) *dashboardtest.Fake {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.byName[cluster]
}

// submit plays `ray job submit` of a submitter, sidecar or user: the job
// comes into being PENDING unless the dashboard has it (K8sJobMode's
// submitter asks `ray job status` first). It reports false when the
// dashboard does not answer.
func (d *dashboards) submit(cluster, id, by string) bool {
	fake := d.fake(cluster)
	if fake == nil {
		return false
	}
	if _, ok := fake.Job(id); ok {
		return true
	}
	fake.AddJob(dashboard.JobInfo{Type: "SUBMISSION", SubmissionID: id, JobStatus: rayv1.JobStatusPending, StartTime: nowMillis()})
	d.record(submission{id: id, cluster: cluster, by: by})
	return true
}

func (d *dashboards) record(s submission) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.started = append(d.started, s)
}

// move sets a job's status, with Ray's start and end times in ms; false
// when the dashboard or the job is not there.
func (d *dashboards) move(cluster, id string, status rayv1.JobStatus) bool {
	fake := d.fake(cluster)
	return fake != nil && fake.UpdateJob(id, func(info *dashboard.JobInfo) {
		info.JobStatus, info.Message = status, "set by the chaos script"
		if status == rayv1.JobStatusRunning {
			info.StartTime = nowMillis()
		}
		if rayv1.IsJobTerminal(status) {
			info.EndTime = nowMillis()
		}
	})
}

// job is a copy of a job on cluster's dashboard.
func (d *dashboards) job(cluster, id string) (dashboard.JobInfo, bool) {
	if fake := d.fake(cluster); fake != nil {
		return fake.Job(id)
	}
	return dashboard.JobInfo{}, false
}

// forget makes cluster's dashboard lose a job, as a restarted head does.
func (d *dashboards) forget(cluster, id string) {
	if fake := d.fake(cluster); fake != nil {
		fake.ForgetJob(id)
		d.mu.Lock()
		d.vanished[id]++
		d.mu.Unlock()
	}
}

func nowMillis() uint64 { return uint64(time.Now().UnixMilli()) } //nolint:gosec // a positive Unix time

// setWeather makes op fail as w says (the zero weather clears it).
func (d *dashboards) setWeather(op dashboardtest.Op, w weather) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if w.err == nil {
		delete(d.weather, op)
		return
	}
	d.weather[op] = w
	d.windows++
}

// runWeather makes one dashboard call fail with one transient fault at a
// time, for 0.2 to 1.5 s, every 1 to 6 s, until ctx ends.
func (d *dashboards) runWeather(ctx context.Context, rng *rand.Rand) {
	for {
		pause(ctx, time.Duration(1000+rng.IntN(5000))*time.Millisecond)
		op := weatherOps[max(0, rng.IntN(len(weatherOps)+1)-1)]
		d.setWeather(op, d.faults[op][rng.IntN(len(d.faults[op]))])
		pause(ctx, time.Duration(200+rng.IntN(1300))*time.Millisecond)
		d.setWeather(op, weather{})
		if ctx.Err() != nil {
			return
		}
	}
}

// provider hands an operator its clients of the dashboards; they fail
// once alive reports the operator dead.
func (d *dashboards) provider(alive func() bool) dashboard.ClientProvider {
	return func(url, _ string) (dashboard.Client, error) {
		return &operatorClient{d: d, url: url, alive: alive}, nil
	}
}

// call returns the fake to call for op, or the error the call fails
// with. When the call times out (timeout, slow response), the request may
// still have reached the dashboard: then the fake is returned with the
// error, and the caller lets the fake act before failing.
func (d *dashboards) call(url string, alive func() bool, op dashboardtest.Op) (*dashboardtest.Fake, error) {
	if !alive() {
		return nil, testenv.ErrKilled
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	fake := d.byURL[url]
	if w := d.weather[op]; w.err != nil {
		if fake != nil && (w.fault == dashboardtest.FaultTimeout || w.fault == dashboardtest.FaultSlow) && d.timedOutRequestLanded() {
			return fake, w.err
		}
		return nil, w.err
	}
	if fake != nil {
		return fake, nil
	}
	return nil, d.refused[op]
}

// timedOutRequestLanded decides whether a request that timed out had
// reached the dashboard: every other one did. The caller holds d.mu.
func (d *dashboards) timedOutRequestLanded() bool {
	d.timeouts++
	return d.timeouts%2 == 0
}

// errNotJobs answers the Serve API, which RayJobs do not use.
var errNotJobs = errors.New("rayjobchaos: the Serve API is not served")

// operatorClient is one operator's client of one dashboard.
type operatorClient struct {
	d     *dashboards
	url   string
	alive func() bool
}

var _ dashboard.Client = (*operatorClient)(nil)

func (c *operatorClient) SubmitJob(ctx context.Context, req *dashboard.JobSubmitRequest) (string, error) {
	fake, callErr := c.d.call(c.url, c.alive, dashboardtest.OpSubmitJob)
	if fake == nil {
		return "", callErr
	}
	id, err := fake.SubmitJob(ctx, req)
	c.d.mu.Lock()
	switch {
	case err == nil:
		c.d.started = append(c.d.started, submission{id: id, cluster: c.d.clusterOfLocked(c.url), by: "operator"})
	case errors.Is(err, dashboard.ErrSubmissionIDInUse):
		c.d.inUse = append(c.d.inUse, req.SubmissionID)
	}
	if callErr != nil {
		c.d.lost++
	}
	c.d.mu.Unlock()
	if callErr != nil {
		return "", callErr
	}
	return id, err
}

func (c *operatorClient) GetJobInfo(ctx context.Context, id string) (*dashboard.JobInfo, error) {
	fake, err := c.d.call(c.url, c.alive, dashboardtest.OpGetJobInfo)
	if err != nil {
		return nil, err
	}
	return fake.GetJobInfo(ctx, id)
}

func (c *operatorClient) StopJob(ctx context.Context, id string) error {
	fake, callErr := c.d.call(c.url, c.alive, dashboardtest.OpStopJob)
	if fake == nil {
		return callErr
	}
	err := fake.StopJob(ctx, id)
	if callErr != nil {
		return callErr
	}
	return err
}

func (c *operatorClient) ListJobs(ctx context.Context) ([]dashboard.JobInfo, error) {
	fake, err := c.d.call(c.url, c.alive, dashboardtest.OpListJobs)
	if err != nil {
		return nil, err
	}
	return fake.ListJobs(ctx)
}

func (c *operatorClient) GetJobLog(ctx context.Context, id string) (string, error) {
	fake, err := c.d.call(c.url, c.alive, dashboardtest.OpGetJobLog)
	if err != nil {
		return "", err
	}
	return fake.GetJobLog(ctx, id)
}

func (c *operatorClient) DeleteJob(ctx context.Context, id string) error {
	fake, err := c.d.call(c.url, c.alive, dashboardtest.OpDeleteJob)
	if err != nil {
		return err
	}
	return fake.DeleteJob(ctx, id)
}

func (c *operatorClient) UpdateDeployments(context.Context, []byte) error { return errNotJobs }

func (c *operatorClient) GetServeDetails(context.Context) (*dashboard.ServeDetails, error) {
	return nil, errNotJobs
}

func (c *operatorClient) GetMultiApplicationStatus(context.Context) (map[string]*dashboard.ServeApplicationStatus, error) {
	return nil, errNotJobs
}

// clusterOfLocked is the cluster whose dashboard answers at url. The
// caller holds d.mu.
func (d *dashboards) clusterOfLocked(url string) string {
	for name, fake := range d.byName {
		if d.byURL[url] == fake {
			return name
		}
	}
	return "?" + url
}
