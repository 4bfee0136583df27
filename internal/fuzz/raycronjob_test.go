package fuzz

import (
	"errors"
	"testing"
	"time"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/validation"
)

// FuzzRayCronJob: an accepted RayCronJob has a schedule whose next time,
// from any moment, is later and the same when asked twice, and a
// jobTemplate that validates as a RayJob spec.
func FuzzRayCronJob(f *testing.F) {
	fuzzAccepted(f, rayv1.KindRayCronJob, func(cj *rayv1.RayCronJob) error {
		return errors.Join(validation.RayCronJobMetadata(cj.ObjectMeta), validation.RayCronJobSpec(cj, gates))
	}, func(t *testing.T, cj *rayv1.RayCronJob) {
		checkSchedule(t, &cj.Spec)
		if err := validation.RayJobSpec(&cj.Spec.JobTemplate, nil, gates); err != nil {
			t.Fatalf("an accepted RayCronJob's jobTemplate is refused as a RayJob spec: %v", err)
		}
	})
}

// FuzzCronSchedule fuzzes the schedule and time zone alone, the part with
// a hand-written parser around robfig/cron.
func FuzzCronSchedule(f *testing.F) {
	for _, s := range []string{"30 2 * * *", "*/15 * * * *", "@hourly", "@every 90m", "0 0 30 2 *", "CRON_TZ=UTC 0 * * * *"} {
		f.Add(s, "Europe/Berlin", true)
		f.Add(s, "", false)
	}
	f.Fuzz(func(t *testing.T, schedule, tz string, withTZ bool) {
		spec := &rayv1.RayCronJobSpec{Schedule: schedule}
		if withTZ {
			spec.TimeZone = &tz
		}
		if _, err := validation.RayCronJobSchedule(spec); err != nil {
			requireNamesField(t, err)
			return
		}
		checkSchedule(t, spec)
	})
}

// checkSchedule: from a few moments, Next is later and deterministic.
func checkSchedule(t *testing.T, spec *rayv1.RayCronJobSpec) {
	t.Helper()
	schedule, err := validation.RayCronJobSchedule(spec)
	if err != nil {
		t.Fatalf("an accepted schedule does not parse again: %v", err)
	}
	for _, from := range []time.Time{time.Unix(0, 0), time.Date(2026, 3, 29, 0, 30, 0, 0, time.UTC), time.Date(2030, 12, 31, 23, 59, 59, 0, time.UTC)} {
		next := schedule.Next(from)
		if !next.IsZero() && !next.After(from) {
			t.Fatalf("%q: Next(%v) = %v, not later", spec.Schedule, from, next)
		}
		if again := schedule.Next(from); !again.Equal(next) {
			t.Fatalf("%q: Next(%v) gave %v then %v", spec.Schedule, from, next, again)
		}
	}
}
