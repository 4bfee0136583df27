package dashboardtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/ray-operator/ray-operator/internal/dashboard"
)

// ErrNotServe is what a ServeFleet client answers to the Jobs API.
var ErrNotServe = errors.New("dashboardtest: a ServeFleet serves only the Serve API")

// ServeFleet is Ray Serve on many clusters in memory, each reached at its
// own dashboard URL, so that a test sees which cluster got which config.
// A PUT makes the config's applications exist with the fleet's initial
// status (RUNNING unless SetInitialStatus says otherwise); tests move them
// with SetAppStatus. It is safe for concurrent use.
type ServeFleet struct {
	mu       sync.Mutex
	clusters map[string]*serveCluster
	initial  string
	errs     map[string]error
	opErrs   map[Op]map[string]error
	calls    map[string]map[Op]int
}

type serveCluster struct {
	configs        [][]byte
	apps           map[string]dashboard.ServeApplicationDetails
	targetCapacity *float64
}

// NewServeFleet returns a fleet with no clusters.
func NewServeFleet() *ServeFleet {
	return &ServeFleet{clusters: map[string]*serveCluster{}, initial: "RUNNING", errs: map[string]error{},
		opErrs: map[Op]map[string]error{}, calls: map[string]map[Op]int{}}
}

// Provider hands out a client of the cluster at each URL.
func (f *ServeFleet) Provider() dashboard.ClientProvider {
	return func(baseURL, _ string) (dashboard.Client, error) {
		return &serveClient{fleet: f, url: baseURL}, nil
	}
}

// SetInitialStatus sets the status of applications a PUT creates.
func (f *ServeFleet) SetInitialStatus(status string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.initial = status
}

// SetError makes every call to the clusters whose URL starts with prefix
// fail with err (nil clears it).
func (f *ServeFleet) SetError(prefix string, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err == nil {
		delete(f.errs, prefix)
		return
	}
	f.errs[prefix] = err
}

// SetOpError makes op (OpGetServeDetails or OpUpdateDeployments) fail
// with err on the clusters whose URL starts with prefix (nil clears it);
// SetError, for every call, wins over it.
func (f *ServeFleet) SetOpError(prefix string, op Op, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.opErrs[op] == nil {
		f.opErrs[op] = map[string]error{}
	}
	if err == nil {
		delete(f.opErrs[op], prefix)
		return
	}
	f.opErrs[op][prefix] = err
}

// SetFault makes op fail on the clusters whose URL starts with prefix as
// fault makes the real client fail (see FaultError), until
// SetOpError(prefix, op, nil). It returns the error it set, nil when the
// fault is no failure for op (garbage in answer to a PUT).
func (f *ServeFleet) SetFault(prefix string, op Op, fault Fault) error {
	err := FaultError(context.Background(), fault, op, "")
	f.SetOpError(prefix, op, err)
	return err
}

// Calls counts the calls of op (OpGetServeDetails or OpUpdateDeployments)
// made to the cluster at url, failed ones included.
func (f *ServeFleet) Calls(url string, op Op) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[url][op]
}

// URLFor is the dashboard URL the operator derives for cluster name in
// namespace ns with the default domain and port.
func URLFor(name, ns string) string {
	return fmt.Sprintf("%s-head-svc.%s.svc.cluster.local:8265", name, ns)
}

// Configs returns every config PUT on the cluster at url, in order.
func (f *ServeFleet) Configs(url string) [][]byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	if c := f.clusters[url]; c != nil {
		return slices.Clone(c.configs)
	}
	return nil
}

// TargetCapacity is the target_capacity last applied at url.
func (f *ServeFleet) TargetCapacity(url string) *float64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	if c := f.clusters[url]; c != nil {
		return c.targetCapacity
	}
	return nil
}

// SetAppStatus sets an application's status at url, creating it.
func (f *ServeFleet) SetAppStatus(url, app, status string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.cluster(url)
	details := c.apps[app]
	details.Name, details.Status = app, status
	c.apps[app] = details
}

// ForgetApps drops every application at url, as a head restarted without
// GCS fault tolerance would.
func (f *ServeFleet) ForgetApps(url string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cluster(url).apps = map[string]dashboard.ServeApplicationDetails{}
}

func (f *ServeFleet) cluster(url string) *serveCluster {
	c := f.clusters[url]
	if c == nil {
		c = &serveCluster{apps: map[string]dashboard.ServeApplicationDetails{}}
		f.clusters[url] = c
	}
	return c
}

// callLocked counts a call of op to url and returns the error it must
// fail with, if any.
func (f *ServeFleet) callLocked(url string, op Op) error {
	if f.calls[url] == nil {
		f.calls[url] = map[Op]int{}
	}
	f.calls[url][op]++
	for _, errs := range []map[string]error{f.errs, f.opErrs[op]} {
		for prefix, err := range errs {
			if strings.HasPrefix(url, prefix) {
				return err
			}
		}
	}
	return nil
}

// put records a config and brings its applications into being.
func (f *ServeFleet) put(url string, configJSON []byte) error {
	var config struct {
		Applications []struct {
			Name string `json:"name"`
		} `json:"applications"`
		TargetCapacity *float64 `json:"target_capacity"`
	}
	if err := json.Unmarshal(configJSON, &config); err != nil {
		return fmt.Errorf("dashboardtest: config is not JSON: %w", err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.callLocked(url, OpUpdateDeployments); err != nil {
		return err
	}
	c := f.cluster(url)
	c.configs = append(c.configs, slices.Clone(configJSON))
	c.targetCapacity = config.TargetCapacity
	apps := map[string]dashboard.ServeApplicationDetails{}
	for _, a := range config.Applications {
		details, ok := c.apps[a.Name]
		if !ok {
			details.Name, details.Status = a.Name, f.initial
		}
		apps[a.Name] = details
	}
	c.apps = apps
	return nil
}

func (f *ServeFleet) details(url string) (*dashboard.ServeDetails, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.callLocked(url, OpGetServeDetails); err != nil {
		return nil, err
	}
	c := f.cluster(url)
	out := &dashboard.ServeDetails{Applications: map[string]dashboard.ServeApplicationDetails{}, TargetCapacity: c.targetCapacity}
	for name, app := range c.apps {
		out.Applications[name] = app
	}
	return out, nil
}

// serveClient is one cluster of a ServeFleet.
type serveClient struct {
	fleet *ServeFleet
	url   string
}

var _ dashboard.Client = (*serveClient)(nil)

func (c *serveClient) UpdateDeployments(_ context.Context, configJSON []byte) error {
	return c.fleet.put(c.url, configJSON)
}

func (c *serveClient) GetServeDetails(context.Context) (*dashboard.ServeDetails, error) {
	return c.fleet.details(c.url)
}

func (c *serveClient) GetMultiApplicationStatus(ctx context.Context) (map[string]*dashboard.ServeApplicationStatus, error) {
	d, err := c.GetServeDetails(ctx)
	if err != nil {
		return nil, err
	}
	return d.ApplicationStatuses(), nil
}

func (c *serveClient) SubmitJob(context.Context, *dashboard.JobSubmitRequest) (string, error) {
	return "", ErrNotServe
}

func (c *serveClient) GetJobInfo(context.Context, string) (*dashboard.JobInfo, error) {
	return nil, ErrNotServe
}

func (c *serveClient) ListJobs(context.Context) ([]dashboard.JobInfo, error) { return nil, ErrNotServe }

func (c *serveClient) GetJobLog(context.Context, string) (string, error) { return "", ErrNotServe }

func (c *serveClient) StopJob(context.Context, string) error { return ErrNotServe }

func (c *serveClient) DeleteJob(context.Context, string) error { return ErrNotServe }
