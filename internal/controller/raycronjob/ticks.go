package raycronjob

import (
	"time"

	"github.com/robfig/cron/v3"
)

// MaxMissedTicks bounds the catch-up without startingDeadlineSeconds, as
// batch/v1 CronJob bounds it: when more schedule times than this are due at
// once (an operator down for long, a long suspension), only the latest
// runs. KubeRay catches up every one of them.
const MaxMissedTicks = 100

// skipReason says why schedule times were passed over without a RayJob.
type skipReason int

const (
	// skipPastDeadline: the time is more than startingDeadlineSeconds ago.
	skipPastDeadline skipReason = iota + 1
	// skipTooMany: more than MaxMissedTicks times were due at once.
	skipTooMany
)

// skippedTicks is a run of consecutive schedule times passed over for one
// reason, from first to last.
type skippedTicks struct {
	reason      skipReason
	first, last time.Time
}

// tickPlan is what a pass does with the schedule: skip some times, run the
// due ones in order, and look again at next.
type tickPlan struct {
	// skipped are the times passed over, oldest first.
	skipped []skippedTicks
	// due are the times to run now, oldest first; at most MaxMissedTicks.
	due []time.Time
	// next is the first schedule time after now; zero when the schedule
	// never fires again.
	next time.Time
}

// planTicks decides which schedule times after `after` (the last time dealt
// with) are due at now. With a deadline, times more than deadline seconds
// before now are skipped. Of the remaining times up to now, all run, oldest
// first, unless there are more than MaxMissedTicks: then only the latest.
func planTicks(schedule cron.Schedule, after, now time.Time, deadline *int64) tickPlan {
	var plan tickPlan
	if deadline != nil {
		cutoff := now.Add(-time.Duration(*deadline) * time.Second)
		if first := schedule.Next(after); !first.IsZero() && first.Before(cutoff) {
			last := lastTickBefore(schedule, after, cutoff)
			plan.skipped = append(plan.skipped, skippedTicks{reason: skipPastDeadline, first: first, last: last})
			after = last
		}
	}
	plan.due = ticksUntil(schedule, after, now, MaxMissedTicks+1)
	if len(plan.due) > MaxMissedTicks {
		latest := lastTickBefore(schedule, after, now.Add(time.Nanosecond))
		plan.skipped = append(plan.skipped, skippedTicks{
			reason: skipTooMany, first: plan.due[0], last: lastTickBefore(schedule, after, latest),
		})
		plan.due = []time.Time{latest}
	}
	plan.next = schedule.Next(now)
	return plan
}

// ticksUntil lists the schedule times after `after` and not after until,
// at most limit of them.
func ticksUntil(schedule cron.Schedule, after, until time.Time, limit int) []time.Time {
	var ticks []time.Time
	for t := schedule.Next(after); !t.IsZero() && !t.After(until) && len(ticks) < limit; t = schedule.Next(t) {
		ticks = append(ticks, t)
	}
	return ticks
}

// lastTickBefore returns the latest schedule time after `after` and before
// bound; the caller knows there is one. It looks back from bound over a
// window that doubles until the window holds a time, so the cost depends on
// the gap before bound, not on how far back `after` is (a year of missed
// minutes costs a few dozen steps).
func lastTickBefore(schedule cron.Schedule, after, bound time.Time) time.Time {
	for back := time.Second; ; back *= 2 {
		from := bound.Add(-back)
		if !from.After(after) {
			from = after
		}
		if t := schedule.Next(from); !t.IsZero() && t.Before(bound) {
			for n := schedule.Next(t); !n.IsZero() && n.Before(bound); n = schedule.Next(n) {
				t = n
			}
			return t
		}
		if from.Equal(after) {
			return time.Time{}
		}
	}
}
