package dashboard

import (
	"context"
	"errors"
	"testing"
	"time"

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
