package main

import (
	"context"
	"fmt"
	"hash/fnv"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/dashboard"
	"github.com/ray-operator/ray-operator/internal/dashboard/dashboardtest"
)

// Simulated dashboard behaviour.
const (
	// slowLatency is the answer time of a slow dashboard: just inside the
	// client's 2 s timeout (dashboard.DefaultTimeout).
	slowLatency = 1900 * time.Millisecond
	// hangLatency is how long a request that times out is held: past the
	// client's timeout.
	hangLatency = 3 * time.Second
	// pendingFor and runningFor are how long each simulated Ray job is
	// PENDING and then RUNNING before it SUCCEEDS.
	pendingFor = time.Second
	runningFor = 3 * time.Second
)

// dashClass is how a cluster's simulated dashboard behaves.
type dashClass string

const (
	classTypical dashClass = "typical"
	classSlow    dashClass = "slow"
)

// simDashboards are the dashboards of every cluster of a run, served by one
// HTTP server over one shared fake (submission ids are unique per RayJob).
// In process, a client for a cluster's dashboard goes to /<cluster name>/
// on it (serveInProcess); over the network, the address a connection was
// made to names the head Pod, hence the cluster (serveNetwork).
type simDashboards struct {
	fake      *dashboardtest.Fake
	srv       *httptest.Server // serveInProcess
	netSrv    *http.Server     // serveNetwork
	clusterOf func(*http.Request) (string, bool)
	latency   time.Duration
	slow      float64
	timeout   float64

	mu         sync.Mutex
	calls      map[string]int       // requests by cluster
	firstSeen  map[string]time.Time // job id -> when the job was first seen PENDING
	runningAt  map[string]time.Time
	totalCalls int
	timeouts   int
	unknown    int // requests to an address that is no head Pod's
}

func newSimDashboards(o *options) *simDashboards {
	d := &simDashboards{
		fake: dashboardtest.NewFake(), latency: o.latency, slow: o.slowFraction, timeout: o.timeoutFraction,
		calls: map[string]int{}, firstSeen: map[string]time.Time{}, runningAt: map[string]time.Time{},
	}
	if o.instant {
		d.latency, d.slow, d.timeout = 0, 0, 0
	}
	return d
}

// serveInProcess serves the dashboards on a loopback port, each cluster's
// under /<cluster name>/ (see provider).
func (d *simDashboards) serveInProcess() {
	d.clusterOf = func(r *http.Request) (string, bool) {
		cluster, _, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
		return cluster, true
	}
	d.srv = httptest.NewServer(d.delay(d.fake.Handler()))
}

// serveNetwork serves the dashboards on addr (0.0.0.0:8265 in the
// benchmark's network namespace, where every Pod address is local): the
// address a connection was made to is a head Pod's, and headOf names its
// cluster. It returns the address it listens on.
func (d *simDashboards) serveNetwork(addr string, headOf func(ip string) (string, bool)) (string, error) {
	d.clusterOf = func(r *http.Request) (string, bool) {
		local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
		if !ok {
			return "", false
		}
		host, _, err := net.SplitHostPort(local.String())
		if err != nil {
			return "", false
		}
		return headOf(host)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", fmt.Errorf("the simulated dashboards' listener: %w", err)
	}
	d.netSrv = &http.Server{Handler: d.delay(d.fake.Handler()), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = d.netSrv.Serve(ln) }()
	return ln.Addr().String(), nil
}

// classOf assigns a cluster its behaviour from a hash of its name, so that
// a run is reproducible: a fraction d.slow of the dashboards is slow.
func (d *simDashboards) classOf(cluster string) dashClass {
	if unit(cluster) < d.slow {
		return classSlow
	}
	return classTypical
}

// timesOut says whether a cluster's nth request times out: a fraction
// d.timeout of all requests, chosen by hash so that a run is reproducible.
func (d *simDashboards) timesOut(cluster string, n int) bool {
	return unit(fmt.Sprintf("%s#%d", cluster, n)) < d.timeout
}

// unit hashes s to [0, 1).
func unit(s string) float64 {
	h := fnv.New32a()
	_, _ = h.Write([]byte(s))
	return float64(h.Sum32()%100000) / 100000
}

// delay holds each request for its cluster's latency and counts it.
func (d *simDashboards) delay(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cluster, ok := d.clusterOf(r)
		if !ok {
			d.mu.Lock()
			d.unknown++
			d.mu.Unlock()
			http.Error(w, "no head Pod has this address", http.StatusBadGateway)
			return
		}
		wait := d.latencyOf(cluster)
		select {
		case <-time.After(wait):
		case <-r.Context().Done():
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (d *simDashboards) latencyOf(cluster string) time.Duration {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.calls[cluster]++
	d.totalCalls++
	switch {
	case d.timesOut(cluster, d.calls[cluster]):
		d.timeouts++
		return hangLatency
	case d.classOf(cluster) == classSlow:
		return slowLatency
	}
	return d.latency
}

// provider hands the operator clients of the simulated dashboards.
func (d *simDashboards) provider() dashboard.ClientProvider {
	return func(baseURL, token string) (dashboard.Client, error) {
		host := strings.TrimPrefix(strings.TrimPrefix(baseURL, "http://"), "https://")
		label, _, _ := strings.Cut(host, ".")
		return dashboard.NewHTTPClient(d.srv.URL+"/"+strings.TrimSuffix(label, "-head-svc"), token)
	}
}

// runJobs moves every submitted job along: PENDING for pendingFor, RUNNING
// for runningFor, then SUCCEEDED, until ctx ends.
func (d *simDashboards) runJobs(ctx context.Context) {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		jobs, err := d.fake.ListJobs(ctx)
		if err != nil {
			continue
		}
		now := time.Now()
		for _, job := range jobs {
			d.advance(job.SubmissionID, job.JobStatus, now)
		}
	}
}

func (d *simDashboards) advance(id string, status rayv1.JobStatus, now time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	switch status {
	case rayv1.JobStatusPending:
		if _, ok := d.firstSeen[id]; !ok {
			d.firstSeen[id] = now
		}
		if now.Sub(d.firstSeen[id]) >= pendingFor {
			d.fake.SetJobStatus(id, rayv1.JobStatusRunning, "")
			d.runningAt[id] = now
		}
	case rayv1.JobStatusRunning:
		if now.Sub(d.runningAt[id]) >= runningFor {
			d.fake.SetJobStatus(id, rayv1.JobStatusSucceeded, "done")
		}
	}
}

// extra are the dashboard figures of a run: calls per job, timeouts, and
// requests to no head Pod's address.
func (d *simDashboards) extra(jobs int) map[string]float64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return map[string]float64{
		"dashboardCallsPerJob":    float64(d.totalCalls) / float64(jobs),
		"dashboardTimeouts":       float64(d.timeouts),
		"dashboardUnknownAddress": float64(d.unknown),
	}
}

func (d *simDashboards) close() {
	if d.srv != nil {
		d.srv.Close()
	}
	if d.netSrv != nil {
		_ = d.netSrv.Close()
	}
}
