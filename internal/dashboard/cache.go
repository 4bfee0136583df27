package dashboard

import (
	"context"
	"errors"
	"sync"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
	"k8s.io/utils/clock"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// Defaults of JobInfoCache, as KubeRay's AsyncJobInfoQuery cache has them
// except CachePollsInFlight: KubeRay polls with 8 workers, so 8 slow or
// hanging dashboards hold every job's polls (found by the RayJob chaos
// suite); here each poll runs on its own, and a slow dashboard holds only
// its own jobs'.
const (
	CachePollsInFlight = 256
	CachePollInterval  = 3 * time.Second
	CacheSize          = 10000
	CacheExpiry        = 10 * time.Minute
)

// JobInfoCache answers GetJobInfo from memory and keeps the answers fresh
// with background polls, so that reconciling many RayJobs does not
// mean one blocking dashboard request per reconcile (the AsyncJobInfoQuery
// feature gate). The first call for a job returns ErrAgain and starts polling
// it every CachePollInterval until it reaches a terminal status or polling
// fails; later calls return the last answer. A cached error is returned once
// and then dropped, so the next call starts polling again. Entries expire
// CacheExpiry after their last update; at most CacheSize are kept.
//
// One JobInfoCache serves every cluster: Wrap each cluster's Client with it,
// or wrap a ClientProvider with Provider. Run Start once.
//
// It schedules polls itself (a channel of tasks, clock.AfterFunc for a
// job's next poll, a slot per poll in flight) rather than on client-go's
// delaying work queue, because the queue cannot be driven exactly by the
// injected clock: its goroutine reads Now and then arms a timer for the
// rest of the delay, so a fake clock stepped in between runs the poll a
// whole step late. BenchmarkScheduleThenStep measures it on 2 shared cores
// with -race: 1 to 6 of 3000 polls armed with AddAfter were still waiting a
// second after the clock reached their time (0 of 3000 without -race),
// against none with AfterFunc, which is armed before the poll reports. The
// cache tests step the clock as soon as a poll reports, so they would flake
// (as the sweep's ticker once did), and they check that once a job's
// polling stops only the sweep waits on the clock, where the queue's 10 s
// heartbeat ticker would wait too. A real clock arms the timer microseconds
// late, so this is about exact tests, not production; the queue would
// bring nothing else the cache lacks but its metrics: each task (job and
// generation) is an item of its own, so there is nothing to deduplicate,
// and it limits no concurrency, so the slots would stay.
type JobInfoCache struct {
	clock    clock.WithTickerAndDelayedExecution
	inFlight int // polls that may run at once
	interval time.Duration
	expiry   time.Duration
	queue    chan pollTask

	mu      sync.Mutex // makes each look-up-then-change on entries atomic
	entries *lru.Cache[cacheKey, *cacheEntry]
	lastGen uint64

	// afterPoll, when set, is called after each poll; tests wait on it
	// instead of sleeping.
	afterPoll func(key cacheKey, again bool)
}

// cacheKey names a job on one dashboard: submission ids are only unique per
// Ray cluster.
type cacheKey struct {
	scope string
	jobID string
}

// cacheEntry is one immutable answer. gen identifies the polling task that
// owns the entry, so that a task outliving a StopJob or an expiry cannot
// overwrite its successor's entry.
type cacheEntry struct {
	info    *JobInfo
	err     error
	updated time.Time
	gen     uint64
}

// pollTask polls one job through the uncached client.
type pollTask struct {
	key    cacheKey
	gen    uint64
	client JobClient
}

// NewJobInfoCache returns a cache with KubeRay's sizes that reads time from
// clk. Nothing is polled until Start runs.
func NewJobInfoCache(clk clock.WithTickerAndDelayedExecution) *JobInfoCache {
	// lru.New fails only for a size below 1.
	entries, _ := lru.New[cacheKey, *cacheEntry](CacheSize)
	return &JobInfoCache{
		clock:    clk,
		inFlight: CachePollsInFlight,
		interval: CachePollInterval,
		expiry:   CacheExpiry,
		// Each entry has at most one live task; twice the entries leaves room
		// for tasks of replaced entries that have not yet noticed.
		queue:   make(chan pollTask, 2*CacheSize),
		entries: entries,
	}
}

// Start runs the polls and the expiry sweep until ctx ends. It fits
// controller-runtime's manager.Runnable.
func (c *JobInfoCache) Start(ctx context.Context) error {
	// The sweep's ticker exists before any poll runs, so that what waits on
	// the clock is the same whichever goroutine the scheduler runs first.
	ticker := c.clock.NewTicker(10 * c.interval)
	defer ticker.Stop()
	var polls sync.WaitGroup
	polls.Go(func() { c.dispatch(ctx, &polls) })
	c.sweep(ctx, ticker)
	polls.Wait()
	return nil
}

// Wrap returns client with GetJobInfo answered by the cache; StopJob and
// DeleteJob drop the job's entry. scope names the cluster, e.g. its
// dashboard URL.
func (c *JobInfoCache) Wrap(scope string, client Client) Client {
	return &cachedClient{Client: client, cache: c, scope: scope}
}

// Provider wraps every client that inner provides, scoped by base URL.
func (c *JobInfoCache) Provider(inner ClientProvider) ClientProvider {
	return func(baseURL, authToken string) (Client, error) {
		client, err := inner(baseURL, authToken)
		if err != nil {
			return nil, err
		}
		return c.Wrap(baseURL, client), nil
	}
}

// get answers from the cache, or starts polling the job and says ErrAgain.
func (c *JobInfoCache) get(key cacheKey, client JobClient) (*JobInfo, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries.Get(key); ok && c.clock.Since(e.updated) <= c.expiry {
		if e.err != nil && !errors.Is(e.err, ErrAgain) {
			c.entries.Remove(key)
		}
		return copyJobInfo(e.info), e.err
	}
	c.lastGen++
	task := pollTask{key: key, gen: c.lastGen, client: client}
	c.entries.Add(key, &cacheEntry{err: ErrAgain, updated: c.clock.Now(), gen: task.gen})
	if !c.enqueue(task) {
		c.entries.Remove(key)
	}
	return nil, ErrAgain
}

// forget drops a job's entry; its polling task ends at its next turn.
func (c *JobInfoCache) forget(key cacheKey) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entries.Remove(key)
}

// enqueue hands task to the pollers without blocking.
func (c *JobInfoCache) enqueue(task pollTask) bool {
	select {
	case c.queue <- task:
		return true
	default:
		return false
	}
}

// dispatch runs each queued task's poll in a goroutine of its own, at most
// inFlight at once, until ctx ends. It runs inside polls, so the polls it
// adds are waited for too.
func (c *JobInfoCache) dispatch(ctx context.Context, polls *sync.WaitGroup) {
	slots := make(chan struct{}, c.inFlight)
	for {
		select {
		case <-ctx.Done():
			return
		case task := <-c.queue:
			select {
			case slots <- struct{}{}:
			case <-ctx.Done():
				return
			}
			polls.Go(func() {
				defer func() { <-slots }()
				c.poll(ctx, task)
			})
		}
	}
}

// poll asks the dashboard once, stores the answer and schedules the next
// poll while the job is still going.
func (c *JobInfoCache) poll(ctx context.Context, task pollTask) {
	again := false
	if c.owns(task) {
		info, err := task.client.GetJobInfo(ctx, task.key.jobID)
		again = c.store(task, info, err) && ctx.Err() == nil
	}
	if again {
		// The callback may run under the clock's lock (fake clocks do), so it
		// only hands the task back; a full queue leaves the last answer to
		// expire.
		c.clock.AfterFunc(c.interval, func() { c.enqueue(task) })
	}
	if c.afterPoll != nil {
		c.afterPoll(task.key, again)
	}
}

// owns reports whether task still owns its job's entry.
func (c *JobInfoCache) owns(task pollTask) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries.Peek(task.key)
	return ok && e.gen == task.gen
}

// store records an answer if task still owns the entry, and reports whether
// the job should be polled again.
func (c *JobInfoCache) store(task pollTask, info *JobInfo, err error) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries.Peek(task.key); !ok || e.gen != task.gen {
		return false
	}
	c.entries.Add(task.key, &cacheEntry{info: info, err: err, updated: c.clock.Now(), gen: task.gen})
	return err == nil && (info == nil || !rayv1.IsJobTerminal(info.JobStatus))
}

// sweep drops expired entries every ten poll intervals until ctx ends, so
// that jobs nobody asks about any more do not hold memory for long.
func (c *JobInfoCache) sweep(ctx context.Context, ticker clock.Ticker) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C():
			c.removeExpired()
		}
	}
}

// removeExpired drops every entry not updated within the expiry.
func (c *JobInfoCache) removeExpired() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, key := range c.entries.Keys() {
		if e, ok := c.entries.Peek(key); ok && c.clock.Since(e.updated) > c.expiry {
			c.entries.Remove(key)
		}
	}
}

// copyJobInfo returns a shallow copy, so a caller that edits the answer does
// not edit the cache.
func copyJobInfo(info *JobInfo) *JobInfo {
	if info == nil {
		return nil
	}
	out := *info
	return &out
}

// cachedClient is a Client whose GetJobInfo goes through a JobInfoCache.
type cachedClient struct {
	Client
	cache *JobInfoCache
	scope string
}

// GetJobInfo answers from the cache; see JobInfoCache. An empty job id is
// refused at once, as the dashboard client refuses it, and never polled.
func (cc *cachedClient) GetJobInfo(ctx context.Context, jobID string) (*JobInfo, error) {
	if jobID == "" {
		return cc.Client.GetJobInfo(ctx, jobID)
	}
	return cc.cache.get(cacheKey{scope: cc.scope, jobID: jobID}, cc.Client)
}

// Uncached is the client the cache wraps, for an answer that must be
// current.
func (cc *cachedClient) Uncached() Client { return cc.Client }

// Uncached returns what client asks directly when it answers from a cache
// (JobInfoCache), and true; else client itself and false. A caller about to
// act for good on an answer (a job not found after its submitter finished)
// asks the dashboard itself, because a cached answer may predate the
// submission; an answer of an uncached client needs no second asking.
func Uncached(client Client) (Client, bool) {
	if c, ok := client.(interface{ Uncached() Client }); ok {
		return c.Uncached(), true
	}
	return client, false
}

// StopJob drops the cached entry and stops the job.
func (cc *cachedClient) StopJob(ctx context.Context, jobID string) error {
	cc.cache.forget(cacheKey{scope: cc.scope, jobID: jobID})
	return cc.Client.StopJob(ctx, jobID)
}

// DeleteJob drops the cached entry and deletes the job.
func (cc *cachedClient) DeleteJob(ctx context.Context, jobID string) error {
	cc.cache.forget(cacheKey{scope: cc.scope, jobID: jobID})
	return cc.Client.DeleteJob(ctx, jobID)
}
