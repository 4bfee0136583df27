package dashboard_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	clocktesting "k8s.io/utils/clock/testing"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/dashboard"
	"github.com/ray-operator/ray-operator/internal/dashboard/dashboardtest"
)

// poll is one background poll the cache reported.
type poll struct {
	JobID string
	Again bool
}

// cacheEnv is a started JobInfoCache over a fake dashboard, on a fake clock.
type cacheEnv struct {
	clock  *clocktesting.FakeClock
	fake   *dashboardtest.Fake
	client dashboard.Client
	polls  chan poll
}

// startCache starts a cache whose polls the test observes; it stops with the
// test.
func startCache(t *testing.T) *cacheEnv {
	t.Helper()
	env := &cacheEnv{
		clock: clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)),
		fake:  dashboardtest.NewFake(),
		polls: make(chan poll, 100),
	}
	cache := dashboard.NewJobInfoCache(env.clock)
	dashboard.SetAfterPoll(cache, func(jobID string, again bool) { env.polls <- poll{jobID, again} })
	env.client = cache.Wrap("http://head:8265", env.fake)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = cache.Start(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return env
}

// waitPoll returns the next poll; the timeout only guards against a hang.
func (e *cacheEnv) waitPoll(t *testing.T) poll {
	t.Helper()
	select {
	case p := <-e.polls:
		return p
	case <-time.After(10 * time.Second):
		t.Fatal("no background poll happened")
		return poll{}
	}
}

// wantPoll waits for the next poll and checks it; what names it in a
// failure.
func (e *cacheEnv) wantPoll(t *testing.T, what string, want poll) {
	t.Helper()
	if diff := cmp.Diff(want, e.waitPoll(t)); diff != "" {
		t.Fatalf("%s (-want +got):\n%s", what, diff)
	}
}

// polledAnswer: a call finds no answer and starts a poll (ErrAgain), the
// poll comes as want, and the next call answers status and err.
func (e *cacheEnv) polledAnswer(t *testing.T, what string, want poll, status rayv1.JobStatus, err error) {
	t.Helper()
	e.want(t, want.JobID, "<nil>", dashboard.ErrAgain)
	e.wantPoll(t, what, want)
	e.want(t, want.JobID, status, err)
}

// get calls GetJobInfo and reduces the answer to (status, error).
func (e *cacheEnv) get(t *testing.T, jobID string) (rayv1.JobStatus, error) {
	t.Helper()
	info, err := e.client.GetJobInfo(t.Context(), jobID)
	if info == nil {
		return "<nil>", err
	}
	return info.JobStatus, err
}

// submit adds a job in status to the fake dashboard.
func (e *cacheEnv) submit(t *testing.T, jobID string, status rayv1.JobStatus) {
	t.Helper()
	if _, err := e.fake.SubmitJob(t.Context(), &dashboard.JobSubmitRequest{Entrypoint: "x", SubmissionID: jobID}); err != nil {
		t.Fatal(err)
	}
	e.fake.SetJobStatus(jobID, status, "")
}

// want checks one GetJobInfo answer.
func (e *cacheEnv) want(t *testing.T, jobID string, wantStatus rayv1.JobStatus, wantErr error) {
	t.Helper()
	status, err := e.get(t, jobID)
	if !errors.Is(err, wantErr) || (wantErr == nil && err != nil) {
		t.Fatalf("GetJobInfo(%s) error = %v, want %v", jobID, err, wantErr)
	}
	if diff := cmp.Diff(wantStatus, status); diff != "" {
		t.Fatalf("GetJobInfo(%s) status (-want +got):\n%s", jobID, diff)
	}
}

func TestCachePollsUntilTerminal(t *testing.T) {
	env := startCache(t)
	env.submit(t, "j", rayv1.JobStatusRunning)

	env.polledAnswer(t, "first poll", poll{"j", true}, rayv1.JobStatusRunning, nil)

	// The dashboard changes, the cache does not until the next poll is due.
	env.fake.SetJobStatus("j", rayv1.JobStatusSucceeded, "")
	env.clock.Step(dashboard.CachePollInterval - time.Millisecond)
	env.want(t, "j", rayv1.JobStatusRunning, nil)
	env.clock.Step(time.Millisecond)
	env.wantPoll(t, "terminal poll", poll{"j", false})
	env.want(t, "j", rayv1.JobStatusSucceeded, nil)

	// Polling stopped: only the expiry sweep's ticker waits on the clock.
	if got := env.clock.Waiters(); got != 1 {
		t.Errorf("clock waiters = %d, want 1 (the sweep)", got)
	}
}

func TestCacheReturnsAnErrorOnceThenPollsAgain(t *testing.T) {
	env := startCache(t)

	env.polledAnswer(t, "poll", poll{"lost", false}, "<nil>", dashboard.ErrNotFound)
	// The error was consumed: the next call starts a new poll.
	env.submit(t, "lost", rayv1.JobStatusPending)
	env.polledAnswer(t, "poll", poll{"lost", true}, rayv1.JobStatusPending, nil)
}

func TestCacheStopAndDeleteClearTheEntry(t *testing.T) {
	cases := map[string]struct {
		// statusBefore is the job's status on the dashboard when act runs.
		statusBefore rayv1.JobStatus
		act          func(context.Context, dashboard.Client) error
		// wantStatus is what the fresh poll finds; empty means the job is gone.
		wantStatus rayv1.JobStatus
	}{
		"stop": {
			statusBefore: rayv1.JobStatusRunning,
			act:          func(ctx context.Context, c dashboard.Client) error { return c.StopJob(ctx, "j") },
			wantStatus:   rayv1.JobStatusStopped,
		},
		"delete": {
			statusBefore: rayv1.JobStatusSucceeded,
			act:          func(ctx context.Context, c dashboard.Client) error { return c.DeleteJob(ctx, "j") },
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			env := startCache(t)
			env.submit(t, "j", rayv1.JobStatusSucceeded)
			env.want(t, "j", "<nil>", dashboard.ErrAgain)
			env.waitPoll(t)
			env.want(t, "j", rayv1.JobStatusSucceeded, nil)
			env.fake.SetJobStatus("j", tc.statusBefore, "")

			if err := tc.act(t.Context(), env.client); err != nil {
				t.Fatal(err)
			}
			env.want(t, "j", "<nil>", dashboard.ErrAgain)
			env.waitPoll(t)
			if tc.wantStatus == "" {
				env.want(t, "j", "<nil>", dashboard.ErrNotFound)
				return
			}
			env.want(t, "j", tc.wantStatus, nil)
		})
	}
}

func TestCacheDropsAStaleTaskAfterStop(t *testing.T) {
	env := startCache(t)
	env.submit(t, "j", rayv1.JobStatusRunning)
	env.want(t, "j", "<nil>", dashboard.ErrAgain)
	env.waitPoll(t) // the first task, due again in one interval

	if err := env.client.StopJob(t.Context(), "j"); err != nil {
		t.Fatal(err)
	}
	env.polledAnswer(t, "second task's poll", poll{"j", false}, rayv1.JobStatusStopped, nil)

	// The first task wakes up, sees it no longer owns the entry and ends.
	env.fake.SetJobStatus("j", rayv1.JobStatusFailed, "")
	env.clock.Step(dashboard.CachePollInterval)
	env.wantPoll(t, "stale task", poll{"j", false})
	env.want(t, "j", rayv1.JobStatusStopped, nil)
}

func TestCacheEntriesExpire(t *testing.T) {
	env := startCache(t)
	env.submit(t, "j", rayv1.JobStatusSucceeded)
	env.want(t, "j", "<nil>", dashboard.ErrAgain)
	env.waitPoll(t)
	env.want(t, "j", rayv1.JobStatusSucceeded, nil)

	env.clock.Step(dashboard.CacheExpiry)
	env.want(t, "j", rayv1.JobStatusSucceeded, nil)
	env.clock.Step(time.Second)
	env.want(t, "j", "<nil>", dashboard.ErrAgain)
	env.waitPoll(t)
	env.want(t, "j", rayv1.JobStatusSucceeded, nil)
}

func TestCacheAnswersAreCopies(t *testing.T) {
	env := startCache(t)
	env.submit(t, "j", rayv1.JobStatusSucceeded)
	env.want(t, "j", "<nil>", dashboard.ErrAgain)
	env.waitPoll(t)
	info, err := env.client.GetJobInfo(t.Context(), "j")
	if err != nil {
		t.Fatal(err)
	}
	info.JobStatus = rayv1.JobStatusFailed
	env.want(t, "j", rayv1.JobStatusSucceeded, nil)
}

// TestCacheRecoversWhenTheDashboardDoes: for each fault, a failed poll is
// returned once and stops that job's polling (nothing but the sweep waits
// on the clock, so a failing dashboard is not polled in a loop); each later
// call starts one new poll; once the dashboard answers again the cache
// serves its answers and follows the job on the poll interval.
func TestCacheRecoversWhenTheDashboardDoes(t *testing.T) {
	for _, fault := range dashboardtest.Faults {
		t.Run(string(fault), func(t *testing.T) {
			env := startCache(t)
			env.submit(t, "j", rayv1.JobStatusRunning)
			faultErr := env.fake.SetFault(dashboardtest.OpGetJobInfo, fault, "j")

			for range 2 {
				env.want(t, "j", "<nil>", dashboard.ErrAgain)
				env.wantPoll(t, "failing poll", poll{"j", false})
				if got := env.clock.Waiters(); got != 1 {
					t.Fatalf("clock waiters = %d after a failed poll, want 1 (the sweep)", got)
				}
				env.want(t, "j", "<nil>", faultErr)
			}

			env.fake.SetError(dashboardtest.OpGetJobInfo, nil)
			env.polledAnswer(t, "poll after recovery", poll{"j", true}, rayv1.JobStatusRunning, nil)

			env.fake.SetJobStatus("j", rayv1.JobStatusSucceeded, "")
			env.clock.Step(dashboard.CachePollInterval)
			env.wantPoll(t, "next poll", poll{"j", false})
			env.want(t, "j", rayv1.JobStatusSucceeded, nil)
		})
	}
}

// hangingClient is a dashboard whose job info requests hang until released.
type hangingClient struct {
	dashboard.Client
	release chan struct{}
}

func (h hangingClient) GetJobInfo(ctx context.Context, _ string) (*dashboard.JobInfo, error) {
	select {
	case <-h.release:
	case <-ctx.Done():
	}
	return nil, errors.New("hung up")
}

// TestCacheSlowDashboardsHoldOnlyTheirOwnPolls: polls of sixteen jobs on a
// dashboard that hangs do not keep a job on another dashboard from being
// polled (with a fixed pool of 8 pollers, as KubeRay's, they would).
func TestCacheSlowDashboardsHoldOnlyTheirOwnPolls(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	cache := dashboard.NewJobInfoCache(clk)
	polled := make(chan string, 100)
	dashboard.SetAfterPoll(cache, func(jobID string, _ bool) { polled <- jobID })
	hung := hangingClient{Client: dashboardtest.NewFake(), release: make(chan struct{})}
	defer close(hung.release)
	fast := dashboardtest.NewFake()
	if _, err := fast.SubmitJob(t.Context(), &dashboard.JobSubmitRequest{Entrypoint: "x", SubmissionID: "fast"}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = cache.Start(ctx); close(done) }()
	defer func() { cancel(); <-done }()

	slow := cache.Wrap("http://slow:8265", hung)
	for i := range 16 {
		if _, err := slow.GetJobInfo(t.Context(), fmt.Sprint("slow-", i)); !errors.Is(err, dashboard.ErrAgain) {
			t.Fatalf("slow job %d: %v", i, err)
		}
	}
	if _, err := cache.Wrap("http://fast:8265", fast).GetJobInfo(t.Context(), "fast"); !errors.Is(err, dashboard.ErrAgain) {
		t.Fatalf("fast job: %v", err)
	}
	select {
	case id := <-polled:
		if id != "fast" {
			t.Errorf("polled %s first, want the fast job (the slow ones hang)", id)
		}
	case <-time.After(10 * time.Second): // guards against a hang only
		t.Fatal("the fast job was not polled while sixteen slow polls hang")
	}
}

// TestCacheRefusesAnEmptyJobID: an empty id is answered by the client at
// once and never becomes a polled entry.
func TestCacheRefusesAnEmptyJobID(t *testing.T) {
	env := startCache(t)
	if _, err := env.client.GetJobInfo(t.Context(), ""); err == nil || errors.Is(err, dashboard.ErrAgain) {
		t.Errorf("GetJobInfo(\"\") = %v, want the client's refusal", err)
	}
}

// TestUncached: a cached client's uncached side asks the dashboard itself.
func TestUncached(t *testing.T) {
	env := startCache(t)
	env.submit(t, "j", rayv1.JobStatusRunning)
	direct, cached := dashboard.Uncached(env.client)
	if !cached {
		t.Error("Uncached says the cache's client is not cached")
	}
	info, err := direct.GetJobInfo(t.Context(), "j")
	if err != nil || info.JobStatus != rayv1.JobStatusRunning {
		t.Errorf("Uncached GetJobInfo = %v, %v; want RUNNING at once", info, err)
	}
	if got, cached := dashboard.Uncached(env.fake); cached || got != dashboard.Client(env.fake) {
		t.Errorf("Uncached of a plain client = %T, %v; want the client, false", got, cached)
	}
}
