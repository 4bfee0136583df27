package dashboard

import (
	"context"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// Activity is what a look at a cluster's dashboard found.
type Activity int

const (
	// ActivityUnknown: the dashboard did not answer, or answered an error.
	ActivityUnknown Activity = iota
	// ActivityBusy: a job or a driver is pending or running.
	ActivityBusy
	// ActivityIdle: every job and driver the dashboard knows has ended.
	ActivityIdle
)

// ActivityReport is the latest look at one cluster's dashboard.
type ActivityReport struct {
	Activity Activity
	// Detail says why: the active job, or the dashboard's error.
	Detail string
	// At is when the look ended; zero means no look has ended yet.
	At time.Time
}

// Defaults of ActivityProbe.
const (
	ActivityProbeInterval = 10 * time.Second
	ActivityProbeTimeout  = 5 * time.Second
)

// ActivityProbe looks at the dashboards of the clusters it is asked about
// in the background, one goroutine per cluster, every interval, so that a
// reconcile pass only reads the last report and never waits on a
// dashboard: a hanging dashboard holds its own goroutine (for at most
// timeout per look) and nothing else. After each look it calls notify, so
// that the cluster's controller runs a pass with the new report.
type ActivityProbe struct {
	clock    clock.WithTicker
	interval time.Duration
	timeout  time.Duration
	notify   func(types.NamespacedName)

	mu     sync.Mutex
	probes map[types.NamespacedName]*activityProbe
}

type activityProbe struct {
	report ActivityReport
	stop   chan struct{}
}

// NewActivityProbe returns a probe; zero interval or timeout mean the
// defaults, a nil notify notifies nothing.
func NewActivityProbe(clk clock.WithTicker, interval, timeout time.Duration, notify func(types.NamespacedName)) *ActivityProbe {
	if interval <= 0 {
		interval = ActivityProbeInterval
	}
	if timeout <= 0 {
		timeout = ActivityProbeTimeout
	}
	if notify == nil {
		notify = func(types.NamespacedName) {}
	}
	return &ActivityProbe{clock: clk, interval: interval, timeout: timeout, notify: notify,
		probes: map[types.NamespacedName]*activityProbe{}}
}

// Report returns the latest report on key's dashboard, starting to probe it
// with the client newClient makes when it is not probed yet. It never
// calls the dashboard itself. A failure to make the client is reported as
// ActivityUnknown and tried again at the next call.
func (p *ActivityProbe) Report(key types.NamespacedName, newClient func() (Client, error)) ActivityReport {
	if report, ok := p.last(key); ok {
		return report
	}
	// Made outside the lock: it may read the cluster's auth Secret.
	c, err := newClient()
	if err != nil {
		return ActivityReport{Activity: ActivityUnknown, Detail: err.Error(), At: p.clock.Now()}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if probe, ok := p.probes[key]; ok {
		return probe.report
	}
	probe := &activityProbe{stop: make(chan struct{})}
	p.probes[key] = probe
	go p.run(key, probe, c)
	return probe.report
}

func (p *ActivityProbe) last(key types.NamespacedName) (ActivityReport, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	probe, ok := p.probes[key]
	if !ok {
		return ActivityReport{}, false
	}
	return probe.report, true
}

// StopAll ends every probe (the operator stops).
func (p *ActivityProbe) StopAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for key, probe := range p.probes {
		close(probe.stop)
		delete(p.probes, key)
	}
}

// Stop ends the probing of key's dashboard and forgets its report.
func (p *ActivityProbe) Stop(key types.NamespacedName) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if probe, ok := p.probes[key]; ok {
		close(probe.stop)
		delete(p.probes, key)
	}
}

// Probing says whether key's dashboard is being probed.
func (p *ActivityProbe) Probing(key types.NamespacedName) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, ok := p.probes[key]
	return ok
}

func (p *ActivityProbe) run(key types.NamespacedName, probe *activityProbe, c Client) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-probe.stop
		cancel()
	}()
	for {
		report := p.look(ctx, c)
		p.mu.Lock()
		current := p.probes[key] == probe
		if current {
			probe.report = report
		}
		p.mu.Unlock()
		if !current {
			return
		}
		p.notify(key)
		select {
		case <-probe.stop:
			return
		case <-p.clock.After(p.interval):
		}
	}
}

// look lists the cluster's jobs once, within the timeout.
func (p *ActivityProbe) look(ctx context.Context, c Client) ActivityReport {
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	jobs, err := c.ListJobs(ctx)
	report := ClassifyActivity(jobs, err)
	report.At = p.clock.Now()
	return report
}

// ClassifyActivity tells what a dashboard's job list says: busy while any
// job or driver (the list holds both, drivers with type DRIVER) has not
// reached a terminal status, idle otherwise; unknown on an error.
func ClassifyActivity(jobs []JobInfo, err error) ActivityReport {
	if err != nil {
		return ActivityReport{Activity: ActivityUnknown, Detail: err.Error()}
	}
	for _, j := range jobs {
		if !rayv1.IsJobTerminal(j.JobStatus) {
			id := j.SubmissionID
			if id == "" {
				id = j.JobID
			}
			return ActivityReport{Activity: ActivityBusy, Detail: fmt.Sprintf("job %s is %s", id, j.JobStatus)}
		}
	}
	return ActivityReport{Activity: ActivityIdle, Detail: fmt.Sprintf("none of the %d jobs is pending or running", len(jobs))}
}
