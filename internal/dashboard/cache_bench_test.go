package dashboard

import (
	"context"
	"errors"
	"testing"
	"time"

	"k8s.io/client-go/util/workqueue"
	clocktesting "k8s.io/utils/clock/testing"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// BenchmarkJobInfoCacheGetHit is GetJobInfo answered from a fresh cached
// entry, from every P at once: the path every reconcile of a running RayJob
// takes with AsyncJobInfoQuery on. All goroutines ask for the same job, so
// the figure includes the contention on the cache's one mutex.
func BenchmarkJobInfoCacheGetHit(b *testing.B) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	c := NewJobInfoCache(clk)
	// Start is not run: no poller touches the entry, and the wrapped client
	// is never called on a hit.
	client := c.Wrap("http://head:8265", nil)
	ctx := context.Background()
	if _, err := client.GetJobInfo(ctx, "job-1"); !errors.Is(err, ErrAgain) {
		b.Fatalf("first GetJobInfo: %v, want ErrAgain", err)
	}
	task := <-c.queue
	info := &JobInfo{SubmissionID: "job-1", JobStatus: rayv1.JobStatusRunning, Entrypoint: "python main.py",
		Message: "Job is currently running.", StartTime: 1767225600000, Metadata: map[string]string{"team": "a"}}
	if !c.store(task, info, nil) {
		b.Fatal("store: the running job would not be polled again")
	}

	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			got, err := client.GetJobInfo(ctx, "job-1")
			if err != nil || got.JobStatus != rayv1.JobStatusRunning {
				b.Errorf("GetJobInfo = %v, %v; want the cached Running job", got, err)
				return
			}
		}
	})
}

// scheduler sets up a way to run something one poll interval later on clk:
// schedule arms it (from the poll's goroutine), ran is closed when it runs,
// stop releases what setup made.
type scheduler func(clk *clocktesting.FakeClock) (schedule func(), ran <-chan struct{}, stop func())

// BenchmarkScheduleThenStep is the figure behind JobInfoCache's own
// scheduling: how often (late/op) a poll armed for the interval has not run
// a second after a test stepped the fake clock by that interval, right
// after the poll reported, as the cache tests do. Run it with
// -benchtime 3000x -race.
func BenchmarkScheduleThenStep(b *testing.B) {
	b.Run("clock.AfterFunc", func(b *testing.B) {
		benchScheduleThenStep(b, func(clk *clocktesting.FakeClock) (func(), <-chan struct{}, func()) {
			ran := make(chan struct{})
			return func() { clk.AfterFunc(CachePollInterval, func() { close(ran) }) }, ran, func() {}
		})
	})
	b.Run("workqueue.AddAfter", func(b *testing.B) {
		benchScheduleThenStep(b, func(clk *clocktesting.FakeClock) (func(), <-chan struct{}, func()) {
			q := workqueue.NewTypedDelayingQueueWithConfig(workqueue.TypedDelayingQueueConfig[int]{Clock: clk})
			ran := make(chan struct{})
			go func() { q.Get(); close(ran) }()
			return func() { q.AddAfter(1, CachePollInterval) }, ran, func() { q.ShutDown(); <-ran }
		})
	})
}

func benchScheduleThenStep(b *testing.B, setup scheduler) {
	late := 0
	for b.Loop() {
		clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
		schedule, ran, stop := setup(clk)
		polled := make(chan struct{})
		go func() { schedule(); close(polled) }()
		<-polled
		clk.Step(CachePollInterval - time.Millisecond)
		clk.Step(time.Millisecond)
		select {
		case <-ran:
		case <-time.After(time.Second): // due, yet waiting on the clock
			late++
		}
		stop()
	}
	b.ReportMetric(float64(late)/float64(b.N), "late/op")
}
