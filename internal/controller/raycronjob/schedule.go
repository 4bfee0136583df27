package raycronjob

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/childwrite"
	"github.com/ray-operator/ray-operator/internal/passsteps"
)

// Outcomes of a RayJob creation, the values of the metric's outcome label.
const (
	outcomeCreated       = "created"
	outcomeAlreadyExists = "already_exists"
	outcomeFailed        = "failed"
)

// tickOutcome is what became of one due schedule time.
type tickOutcome int

const (
	// tickCreated: its RayJob was created.
	tickCreated tickOutcome = iota + 1
	// tickExisted: its RayJob was there already (a stale status, a restart,
	// a second time in the same minute).
	tickExisted
	// tickForbidden: skipped, concurrencyPolicy Forbid with a RayJob running.
	tickForbidden
)

// reconcileSchedule deals with every schedule time since the last one
// dealt with (planTicks): reports the skipped ones, runs the due ones
// oldest first, records the latest in status.lastScheduleTime and asks for
// a pass at the next schedule time.
func (r *Reconciler) reconcileSchedule(ctx context.Context, s *scope) (passsteps.Result, error) {
	plan := planTicks(s.schedule, s.lastDealtWith(), s.now, s.cj.Spec.StartingDeadlineSeconds)
	for _, skip := range plan.skipped {
		r.reportSkipped(s, skip)
		s.dealtWith(skip.last)
	}
	if err := r.runDue(ctx, s, plan.due); err != nil {
		return passsteps.Result{}, err
	}
	return s.requeueAt(plan.next), nil
}

// runDue runs the due schedule times in order and reports those Forbid
// skipped in one event. It stops at the first error; the times before it
// are dealt with.
func (r *Reconciler) runDue(ctx context.Context, s *scope, due []time.Time) error {
	var forbidden []time.Time
	defer func() { r.reportForbidden(s, forbidden) }()
	for _, t := range due {
		outcome, err := r.runTick(ctx, s, t)
		if err != nil {
			return err
		}
		if outcome == tickForbidden {
			forbidden = append(forbidden, t)
		}
		s.dealtWith(t)
	}
	return nil
}

// runTick deals with one due schedule time: nothing when its RayJob
// exists, else what the concurrency policy says, then the RayJob.
func (r *Reconciler) runTick(ctx context.Context, s *scope, t time.Time) (tickOutcome, error) {
	job := buildRayJob(s.cj, t)
	if s.jobs.names[job.Name] {
		return tickExisted, nil
	}
	proceed, err := r.admitRun(ctx, s)
	if err != nil || !proceed {
		return tickForbidden, err
	}
	return r.createRayJob(ctx, s, job, t)
}

// createRayJob creates the RayJob of schedule time t. AlreadyExists counts
// as success (KubeRay's guard against a stale view): the name is
// deterministic, so the RayJob is the one this time asked for.
func (r *Reconciler) createRayJob(ctx context.Context, s *scope, job *rayv1.RayJob, t time.Time) (tickOutcome, error) {
	existed := false
	err := r.Children().Create(ctx, s.cj, job, childwrite.Noted(childwrite.Create,
		fmt.Sprintf("RayJob %s for the schedule time %s", job.Name, formatTime(t)), reasonCreatedRayJob, reasonFailedToCreateRayJob),
		childwrite.Related(), childwrite.AlreadyExistsIf(func(context.Context) bool { existed = true; return true }))
	switch {
	case err != nil:
		r.countCreation(s, outcomeFailed)
		return 0, err
	case existed:
		r.countCreation(s, outcomeAlreadyExists)
		return tickExisted, nil
	}
	r.countCreation(s, outcomeCreated)
	s.jobs.created(job)
	return tickCreated, nil
}

// reportSkipped emits the event of schedule times passed over.
func (r *Reconciler) reportSkipped(s *scope, skip skippedTicks) {
	switch skip.reason {
	case skipPastDeadline:
		r.events.Eventf(s.cj, nil, corev1.EventTypeWarning, reasonMissSchedule, actionSkip,
			"Skipped the schedule time(s) %s: missed by more than startingDeadlineSeconds (%ds)",
			formatRange(skip.first, skip.last), *s.cj.Spec.StartingDeadlineSeconds)
	case skipTooMany:
		r.events.Eventf(s.cj, nil, corev1.EventTypeWarning, reasonTooManyMissedTimes, actionSkip,
			"More than %d schedule times were due at once: skipped %s and running only the latest. "+
				"Set or decrease startingDeadlineSeconds to bound the catch-up", MaxMissedTicks, formatRange(skip.first, skip.last))
	}
}

// reportForbidden emits one event for the schedule times Forbid skipped.
func (r *Reconciler) reportForbidden(s *scope, times []time.Time) {
	if len(times) == 0 {
		return
	}
	names := make([]string, 0, len(s.jobs.active))
	for _, job := range s.jobs.active {
		names = append(names, job.Name)
	}
	r.events.Eventf(s.cj, nil, corev1.EventTypeNormal, reasonJobAlreadyActive, actionSkip,
		"Skipped the schedule time(s) %s: concurrencyPolicy is Forbid and RayJob %s has not finished",
		formatRange(times[0], times[len(times)-1]), strings.Join(names, ", "))
}

// countCreation feeds the creations metric, when metrics are on.
func (r *Reconciler) countCreation(s *scope, outcome string) {
	if r.Metrics != nil {
		r.Metrics.ObserveRayJobCreation(s.cj.Name, s.cj.Namespace, outcome)
	}
}

// dealtWith moves status.lastScheduleTime forward to t.
func (s *scope) dealtWith(t time.Time) {
	if last := s.cj.Status.LastScheduleTime; last == nil || t.After(last.Time) {
		s.cj.Status.LastScheduleTime = &metav1.Time{Time: t}
	}
}

// formatTime renders a schedule time in events: RFC 3339, UTC.
func formatTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// formatRange renders one time, or "first to last".
func formatRange(first, last time.Time) string {
	if first.Equal(last) {
		return formatTime(first)
	}
	return formatTime(first) + " to " + formatTime(last)
}
