package raycronjob

import (
	"time"

	"github.com/robfig/cron/v3"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/passsteps"
)

// scope is what one pass works on.
type scope struct {
	// cj is the RayCronJob as read; steps change only its status.
	cj *rayv1.RayCronJob
	// original is the status as read, to decide whether to write.
	original *rayv1.RayCronJobStatus
	// now is the time of the pass.
	now time.Time
	// schedule is the parsed schedule, once the spec is valid.
	schedule cron.Schedule
	// jobs are the RayJobs the RayCronJob owns; nil until observed.
	jobs *ownedJobs
}

func newScope(cj *rayv1.RayCronJob, now time.Time) *scope {
	return &scope{cj: cj, original: cj.Status.DeepCopy(), now: now}
}

// requeueAt asks for a pass at t: a zero t asks for nothing (a schedule
// that never fires again), a t not after now for one as soon as possible.
func (s *scope) requeueAt(t time.Time) passsteps.Result {
	if t.IsZero() {
		return passsteps.Result{}
	}
	return passsteps.Requeue(max(t.Sub(s.now), minRequeue))
}

// lastDealtWith is the schedule time the next pass starts after: the last
// one dealt with, or the RayCronJob's creation (KubeRay's "earliest time").
func (s *scope) lastDealtWith() time.Time {
	if t := s.cj.Status.LastScheduleTime; t != nil {
		return t.Time
	}
	return s.cj.CreationTimestamp.Time
}
