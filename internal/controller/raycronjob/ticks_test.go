package raycronjob

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/robfig/cron/v3"
	"k8s.io/utils/ptr"
)

func mustSchedule(t *testing.T, schedule string) cron.Schedule {
	t.Helper()
	s, err := cron.ParseStandard("TZ=UTC " + schedule)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestPlanTicks(t *testing.T) {
	at := func(h, m, s int) time.Time { return time.Date(2026, 3, 2, h, m, s, 0, time.UTC) }
	tests := map[string]struct {
		schedule   string
		after, now time.Time
		deadline   *int64
		want       tickPlan
	}{
		"nothing due yet": {after: at(10, 0, 20), now: at(10, 0, 50),
			want: tickPlan{next: at(10, 1, 0)}},
		"first time": {after: at(10, 0, 20), now: at(10, 1, 0),
			want: tickPlan{due: []time.Time{at(10, 1, 0)}, next: at(10, 2, 0)}},
		"catch-up, oldest first": {after: at(10, 1, 0), now: at(10, 5, 30),
			want: tickPlan{due: []time.Time{at(10, 2, 0), at(10, 3, 0), at(10, 4, 0), at(10, 5, 0)}, next: at(10, 6, 0)}},
		"deadline skips what is older": {after: at(10, 0, 0), now: at(10, 10, 30), deadline: ptr.To[int64](120),
			want: tickPlan{
				skipped: []skippedTicks{{reason: skipPastDeadline, first: at(10, 1, 0), last: at(10, 8, 0)}},
				due:     []time.Time{at(10, 9, 0), at(10, 10, 0)}, next: at(10, 11, 0)}},
		"deadline skips everything": {after: at(10, 0, 0), now: at(10, 5, 30), deadline: ptr.To[int64](20),
			want: tickPlan{skipped: []skippedTicks{{reason: skipPastDeadline, first: at(10, 1, 0), last: at(10, 5, 0)}}, next: at(10, 6, 0)}},
		"deadline 0 at the exact time": {after: at(10, 0, 0), now: at(10, 1, 0), deadline: ptr.To[int64](0),
			want: tickPlan{due: []time.Time{at(10, 1, 0)}, next: at(10, 2, 0)}},
		"deadline 0 a second late": {after: at(10, 0, 0), now: at(10, 1, 1), deadline: ptr.To[int64](0),
			want: tickPlan{skipped: []skippedTicks{{reason: skipPastDeadline, first: at(10, 1, 0), last: at(10, 1, 0)}}, next: at(10, 2, 0)}},
		"exactly 100 missed all run": {after: at(10, 0, 0), now: at(11, 40, 0),
			want: tickPlan{due: everyMinute(at(10, 1, 0), 100), next: at(11, 41, 0)}},
		"101 missed: only the latest": {after: at(10, 0, 0), now: at(11, 41, 10),
			want: tickPlan{
				skipped: []skippedTicks{{reason: skipTooMany, first: at(10, 1, 0), last: at(11, 40, 0)}},
				due:     []time.Time{at(11, 41, 0)}, next: at(11, 42, 0)}},
		"a year missed": {after: at(10, 0, 0).AddDate(-1, 0, 0), now: at(10, 0, 30),
			want: tickPlan{
				skipped: []skippedTicks{{reason: skipTooMany, first: at(10, 1, 0).AddDate(-1, 0, 0), last: at(9, 59, 0)}},
				due:     []time.Time{at(10, 0, 0)}, next: at(10, 1, 0)}},
		"deadline, then too many in its window": {after: at(8, 0, 0), now: at(10, 10, 30), deadline: ptr.To[int64](7200),
			want: tickPlan{
				skipped: []skippedTicks{
					{reason: skipPastDeadline, first: at(8, 1, 0), last: at(8, 10, 0)},
					{reason: skipTooMany, first: at(8, 11, 0), last: at(10, 9, 0)},
				},
				due: []time.Time{at(10, 10, 0)}, next: at(10, 11, 0)}},
		"a schedule that never fires": {schedule: "0 0 31 2 *", after: at(10, 0, 0), now: at(10, 30, 0)},
		"@every 90s": {schedule: "@every 90s", after: at(10, 0, 20), now: at(10, 4, 0),
			want: tickPlan{due: []time.Time{at(10, 1, 50), at(10, 3, 20)}, next: at(10, 5, 30)}},
		"hourly, deadline between times": {schedule: "@hourly", after: at(7, 0, 0), now: at(10, 0, 40), deadline: ptr.To[int64](60),
			want: tickPlan{skipped: []skippedTicks{{reason: skipPastDeadline, first: at(8, 0, 0), last: at(9, 0, 0)}},
				due: []time.Time{at(10, 0, 0)}, next: at(11, 0, 0)}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			schedule := tc.schedule
			if schedule == "" {
				schedule = "* * * * *"
			}
			got := planTicks(mustSchedule(t, schedule), tc.after, tc.now, tc.deadline)
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(tickPlan{}, skippedTicks{})); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
		})
	}
}

// everyMinute returns n consecutive minutes from first.
func everyMinute(first time.Time, n int) []time.Time {
	out := make([]time.Time, n)
	for i := range out {
		out[i] = first.Add(time.Duration(i) * time.Minute)
	}
	return out
}

// TestLastTickBeforeIsCheap bounds the work of finding the latest time
// after a long gap: a year of missed minutes takes a few dozen calls of
// Next, not half a million.
func TestLastTickBeforeIsCheap(t *testing.T) {
	counter := &countingSchedule{Schedule: mustSchedule(t, "* * * * *")}
	now := time.Date(2026, 3, 2, 10, 0, 30, 0, time.UTC)
	got := lastTickBefore(counter, now.AddDate(-1, 0, 0), now)
	if want := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC); !got.Equal(want) {
		t.Errorf("lastTickBefore = %v, want %v", got, want)
	}
	if counter.calls > 50 {
		t.Errorf("%d calls of Next, want at most 50", counter.calls)
	}
}

type countingSchedule struct {
	cron.Schedule
	calls int
}

func (c *countingSchedule) Next(t time.Time) time.Time {
	c.calls++
	return c.Schedule.Next(t)
}
