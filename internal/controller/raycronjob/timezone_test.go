package raycronjob

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestTimeZones drives schedules with spec.timeZone by their requeues and
// checks the RayJobs' schedule times (in UTC), across both of 2026's
// daylight-saving changes. robfig/cron, which KubeRay and batch/v1 CronJob
// use too, skips a local time the spring change removes and runs one the
// autumn change repeats twice; the names stay distinct, so both RayJobs
// exist.
func TestTimeZones(t *testing.T) {
	utc := func(mon time.Month, d, h, m int) time.Time { return time.Date(2026, mon, d, h, m, 0, 0, time.UTC) }
	tests := map[string]struct {
		schedule, tz string
		from, until  time.Time
		want         []time.Time
	}{
		"02:30 Berlin over the spring change (29 March has no 02:30)": {
			schedule: "30 2 * * *", tz: "Europe/Berlin", from: utc(3, 27, 0, 0), until: utc(4, 1, 0, 0),
			want: []time.Time{utc(3, 27, 1, 30), utc(3, 28, 1, 30), utc(3, 30, 0, 30), utc(3, 31, 0, 30)},
		},
		"02:30 Berlin over the autumn change (25 October has it twice)": {
			schedule: "30 2 * * *", tz: "Europe/Berlin", from: utc(10, 23, 12, 0), until: utc(10, 27, 0, 0),
			want: []time.Time{utc(10, 24, 0, 30), utc(10, 25, 0, 30), utc(10, 25, 1, 30), utc(10, 26, 1, 30)},
		},
		"hourly Berlin over the autumn change: every real hour once": {
			schedule: "0 * * * *", tz: "Europe/Berlin", from: utc(10, 24, 23, 30), until: utc(10, 25, 3, 30),
			want: []time.Time{utc(10, 25, 0, 0), utc(10, 25, 1, 0), utc(10, 25, 2, 0), utc(10, 25, 3, 0)},
		},
		"09:00 New York weekdays, before and after its spring change": {
			schedule: "0 9 * * 1-5", tz: "America/New_York", from: utc(3, 6, 0, 0), until: utc(3, 11, 0, 0),
			want: []time.Time{utc(3, 6, 14, 0), utc(3, 9, 13, 0), utc(3, 10, 13, 0)},
		},
		"midnight Tokyo": {
			schedule: "@daily", tz: "Asia/Tokyo", from: utc(3, 1, 12, 0), until: utc(3, 3, 12, 0),
			want: []time.Time{utc(3, 1, 15, 0), utc(3, 2, 15, 0)},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, tc.from, cronJob().Created(tc.from).Schedule(tc.schedule).TimeZone(tc.tz).Obj())
			e.runUntil(t, tc.until)
			var got []time.Time
			for _, job := range e.rayJobs(t) {
				got = append(got, scheduledTime(&job).UTC())
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("schedule times of the RayJobs (-want +got):\n%s", diff)
			}
		})
	}
}
