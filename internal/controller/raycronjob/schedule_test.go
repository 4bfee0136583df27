package raycronjob

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// TestStartingDeadline: times missed by more than startingDeadlineSeconds
// are skipped with one Warning event; the others run.
func TestStartingDeadline(t *testing.T) {
	e := newEnv(t, minute(10).Add(30*time.Second), cronJob().StartingDeadlineSeconds(120).LastScheduleTime(minute(0)).Obj())
	if res := e.reconcile(t); res.RequeueAfter != 30*time.Second {
		t.Errorf("requeue after %v, want 30s", res.RequeueAfter)
	}
	if diff := cmp.Diff(jobNames(minute(9), minute(10)), e.rayJobNames(t)); diff != "" {
		t.Errorf("RayJobs (-want +got):\n%s", diff)
	}
	want := append([]string{"Warning MissSchedule Skipped the schedule time(s) 2026-03-02T10:01:00Z to 2026-03-02T10:08:00Z: " +
		"missed by more than startingDeadlineSeconds (120s)"}, createdEvents(minute(9), minute(10))...)
	if diff := cmp.Diff(want, e.drainEvents()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}

	// Everything too late and nothing due: the skip is recorded, so the
	// next pass does not report it again.
	e.clock.SetTime(minute(15).Add(40 * time.Second))
	e.update(t, func(cj *rayv1.RayCronJob) { cj.Spec.StartingDeadlineSeconds = new(int64(10)) })
	e.reconcile(t)
	e.reconcile(t)
	want = []string{"Warning MissSchedule Skipped the schedule time(s) 2026-03-02T10:11:00Z to 2026-03-02T10:15:00Z: " +
		"missed by more than startingDeadlineSeconds (10s)"}
	if diff := cmp.Diff(want, e.drainEvents()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if got := e.cronJob(t).Status.LastScheduleTime; !got.Equal(&metav1.Time{Time: minute(15)}) {
		t.Errorf("lastScheduleTime %v, want 10:15", got)
	}
}

// TestTooManyMissedTimes: without a deadline, more than 100 due times run
// only the latest, with a Warning event; 100 all run (KubeRay's catch-up).
func TestTooManyMissedTimes(t *testing.T) {
	t.Run("101", func(t *testing.T) {
		e := newEnv(t, minute(101).Add(10*time.Second), cronJob().LastScheduleTime(minute(0)).Obj())
		e.reconcile(t)
		if diff := cmp.Diff(jobNames(minute(101)), e.rayJobNames(t)); diff != "" {
			t.Errorf("RayJobs (-want +got):\n%s", diff)
		}
		want := []string{"Warning TooManyMissedTimes More than 100 schedule times were due at once: skipped " +
			"2026-03-02T10:01:00Z to 2026-03-02T11:40:00Z and running only the latest. " +
			"Set or decrease startingDeadlineSeconds to bound the catch-up", created(minute(101))}
		if diff := cmp.Diff(want, e.drainEvents()); diff != "" {
			t.Errorf("events (-want +got):\n%s", diff)
		}
	})
	t.Run("100", func(t *testing.T) {
		e := newEnv(t, minute(100).Add(10*time.Second), cronJob().LastScheduleTime(minute(0)).Obj())
		e.reconcile(t)
		if diff := cmp.Diff(jobNames(minutes(1, 100)...), e.rayJobNames(t)); diff != "" {
			t.Errorf("RayJobs (-want +got):\n%s", diff)
		}
	})
}

// TestCreateFailure: a RayJob that cannot be created gets a Warning event
// and a retry after 3 s; the times before it stay dealt with.
func TestCreateFailure(t *testing.T) {
	e := newEnv(t, minute(3).Add(5*time.Second))
	failing := jobName(minute(2))
	e.c = fake.NewClientBuilder().WithScheme(newScheme(t)).WithObjects(cronJob().LastScheduleTime(minute(0)).Obj()).
		WithStatusSubresource(&rayv1.RayCronJob{}, &rayv1.RayJob{}).
		WithInterceptorFuncs(interceptor.Funcs{Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if obj.GetName() == failing {
				return errors.New("quota exceeded")
			}
			return c.Create(ctx, obj, opts...)
		}}).Build()
	e.r.Client, e.r.LiveReader = e.c, e.c

	if res := e.reconcile(t); res.RequeueAfter != 3*time.Second {
		t.Errorf("requeue after %v, want 3s", res.RequeueAfter)
	}
	if diff := cmp.Diff(jobNames(minute(1)), e.rayJobNames(t)); diff != "" {
		t.Errorf("RayJobs (-want +got):\n%s", diff)
	}
	want := []string{created(minute(1)), "Warning FailedToCreateRayJob Failed to create RayJob " + failing +
		" for the schedule time 2026-03-02T10:02:00Z: quota exceeded"}
	if diff := cmp.Diff(want, e.drainEvents()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if got := e.cronJob(t).Status.LastScheduleTime; !got.Equal(&metav1.Time{Time: minute(1)}) {
		t.Errorf("lastScheduleTime %v, want 10:01 (10:02 is retried)", got)
	}
	if diff := cmp.Diff(map[string]int{"cron/created": 1, "cron/failed": 1}, e.metrics.counts); diff != "" {
		t.Errorf("creations metric (-want +got):\n%s", diff)
	}
}
