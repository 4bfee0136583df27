package validation

import (
	"strings"
	"testing"
	"time"

	"k8s.io/utils/ptr"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/features"
	"github.com/ray-operator/ray-operator/internal/testing/wrappers"
)

func TestRayCronJobMetadata(t *testing.T) {
	tests := map[string]struct {
		name string
		want string
	}{
		"36 characters":    {name: strings.Repeat("a", 36)},
		"37 characters":    {name: strings.Repeat("a", 37), want: "RayCronJob name should be no more than 36 characters, got 37"},
		"not DNS-1035":     {name: "1nightly", want: "RayCronJob name should be a valid DNS1035 label"},
		"dots not allowed": {name: "nightly.job", want: "RayCronJob name should be a valid DNS1035 label"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			checkError(t, RayCronJobMetadata(wrappers.MakeRayCronJob(tc.name, "ns").Obj().ObjectMeta), tc.want)
		})
	}
	// The longest name gives the longest RayJob name until the year 2160
	// (unix minutes have 8 digits), and that one is valid.
	longest := wrappers.MakeRayJob(strings.Repeat("a", 36)+"-99999999", "ns").Obj()
	if err := RayJobMetadata(longest.ObjectMeta); err != nil {
		t.Errorf("RayJob of the longest RayCronJob name: %v", err)
	}
}

func TestRayCronJobSchedule(t *testing.T) {
	from := time.Date(2026, 3, 28, 22, 17, 0, 0, time.UTC)
	tests := map[string]struct {
		schedule string
		tz       *string
		want     string    // error part; empty means valid
		next     time.Time // the first tick after from, when valid
	}{
		"five fields":          {schedule: "30 2 * * *", tz: ptr.To("UTC"), next: time.Date(2026, 3, 29, 2, 30, 0, 0, time.UTC)},
		"descriptor":           {schedule: "@hourly", tz: ptr.To("UTC"), next: time.Date(2026, 3, 28, 23, 0, 0, 0, time.UTC)},
		"@every":               {schedule: "@every 90m", next: from.Add(90 * time.Minute)},
		"time zone":            {schedule: "30 2 * * *", tz: ptr.To("Asia/Tokyo"), next: time.Date(2026, 3, 30, 2, 30, 0, 0, mustZone(t, "Asia/Tokyo"))},
		"descriptor with zone": {schedule: "@daily", tz: ptr.To("America/New_York"), next: time.Date(2026, 3, 29, 0, 0, 0, 0, mustZone(t, "America/New_York"))},
		"TZ in schedule":       {schedule: "TZ=UTC 0 * * * *", want: "must not set a time zone (TZ= or CRON_TZ=): use spec.timeZone"},
		"CRON_TZ in schedule":  {schedule: "CRON_TZ=Europe/Paris 0 * * * *", want: "must not set a time zone"},
		"six fields":           {schedule: "0 0 * * * *", want: `spec.schedule "0 0 * * * *" is not a valid cron schedule: expected exactly 5 fields`},
		"garbage":              {schedule: "every day", want: "is not a valid cron schedule"},
		"empty":                {schedule: "", want: "is not a valid cron schedule"},
		"empty with zone":      {schedule: "", tz: ptr.To("UTC"), want: "is not a valid cron schedule"},
		"unknown descriptor":   {schedule: "@fortnightly", want: "is not a valid cron schedule"},
		"30 February":          {schedule: "0 0 30 2 *", want: `spec.schedule "0 0 30 2 *" never fires`},
		"29 February":          {schedule: "0 0 29 2 *", tz: ptr.To("UTC"), next: time.Date(2028, 2, 29, 0, 0, 0, 0, time.UTC)},
		"out of range":         {schedule: "61 * * * *", want: "is not a valid cron schedule"},
		"unknown zone":         {schedule: "@hourly", tz: ptr.To("Mars/Olympus"), want: `spec.timeZone "Mars/Olympus" is not a known IANA time zone name`},
		"empty zone":           {schedule: "@hourly", tz: ptr.To(""), want: "spec.timeZone must not be empty"},
		"zone with a space":    {schedule: "@hourly", tz: ptr.To("UTC 5"), want: "is not a known IANA time zone name"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			spec := &rayv1.RayCronJobSpec{Schedule: tc.schedule, TimeZone: tc.tz}
			schedule, err := RayCronJobSchedule(spec)
			checkError(t, err, tc.want)
			if err == nil && !schedule.Next(from).Equal(tc.next) {
				t.Errorf("Next(%v) = %v, want %v", from, schedule.Next(from), tc.next)
			}
		})
	}
}

func TestRayCronJobSpec(t *testing.T) {
	tests := map[string]struct {
		cj   *rayv1.RayCronJob
		want string
	}{
		"default": {cj: wrappers.MakeRayCronJob("cron", "ns").Obj()},
		"all batch/v1 fields": {cj: wrappers.MakeRayCronJob("cron", "ns").ConcurrencyPolicy(rayv1.ReplaceConcurrent).
			StartingDeadlineSeconds(0).HistoryLimits(0, 0).Obj()},
		"bad schedule": {cj: wrappers.MakeRayCronJob("cron", "ns").Schedule("* *").Obj(), want: "is not a valid cron schedule"},
		"unknown concurrencyPolicy": {cj: wrappers.MakeRayCronJob("cron", "ns").ConcurrencyPolicy("Sometimes").Obj(),
			want: `spec.concurrencyPolicy "Sometimes" is not one of Allow, Forbid or Replace`},
		"negative deadline": {cj: wrappers.MakeRayCronJob("cron", "ns").StartingDeadlineSeconds(-5).Obj(),
			want: "spec.startingDeadlineSeconds must be a non-negative number of seconds, got -5"},
		"negative successful limit": {cj: wrappers.MakeRayCronJob("cron", "ns").HistoryLimits(-1, 0).Obj(),
			want: "spec.successfulJobsHistoryLimit must be a non-negative number of RayJobs, got -1"},
		"negative failed limit": {cj: wrappers.MakeRayCronJob("cron", "ns").HistoryLimits(0, -1).Obj(),
			want: "spec.failedJobsHistoryLimit must be a non-negative number of RayJobs, got -1"},
		"jobTemplate as a RayJob spec": {cj: wrappers.MakeRayCronJob("cron", "ns").JobTemplate(func() *rayv1.RayJobSpec {
			spec := wrappers.MakeRayJobSpec()
			spec.Suspend = true
			return spec
		}()).Obj(), want: "spec.jobTemplate: The RayJob spec is invalid: a RayJob with shutdownAfterJobFinishes set to false is not allowed to be suspended"},
		"jobTemplate's cluster spec": {cj: wrappers.MakeRayCronJob("cron", "ns").JobTemplate(func() *rayv1.RayJobSpec {
			spec := wrappers.MakeRayJobSpec()
			spec.RayClusterSpec.HeadGroupSpec.Template.Spec.Containers = nil
			return spec
		}()).Obj(), want: "spec.jobTemplate: The RayJob spec is invalid: headGroupSpec should have at least one container"},
		"jobTemplate deletion strategy needs the gate": {cj: wrappers.MakeRayCronJob("cron", "ns").JobTemplate(func() *rayv1.RayJobSpec {
			spec := wrappers.MakeRayJobSpec()
			spec.DeletionStrategy = &rayv1.DeletionStrategy{DeletionRules: []rayv1.DeletionRule{{Policy: rayv1.DeleteCluster,
				Condition: rayv1.DeletionCondition{JobStatus: ptr.To(rayv1.JobStatusSucceeded)}}}}
			return spec
		}()).Obj(), want: "RayJobDeletionPolicy feature gate must be enabled"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			gate := features.NewGate()
			if err := gate.SetFromMap(map[string]bool{string(features.RayJobDeletionPolicy): false}); err != nil {
				t.Fatal(err)
			}
			checkError(t, RayCronJobSpec(tc.cj, gate), tc.want)
		})
	}
}

// checkError fails unless err is nil (want empty) or contains want.
func checkError(t *testing.T, err error, want string) {
	t.Helper()
	switch {
	case want == "" && err != nil:
		t.Errorf("unexpected error %v", err)
	case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
		t.Errorf("error %v, want one containing %q", err, want)
	}
}

func mustZone(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

// TestRayCronJobScheduleLocalZone: without spec.timeZone the schedule is in
// the operator's local zone even for times in another zone (time.Local is
// swapped for the test; nothing here runs in parallel).
func TestRayCronJobScheduleLocalZone(t *testing.T) {
	saved := time.Local
	time.Local = mustZone(t, "Asia/Kolkata") // UTC+05:30
	t.Cleanup(func() { time.Local = saved })

	schedule, err := RayCronJobSchedule(&rayv1.RayCronJobSpec{Schedule: "0 * * * *"})
	if err != nil {
		t.Fatal(err)
	}
	from := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	if got, want := schedule.Next(from), time.Date(2026, 3, 2, 10, 30, 0, 0, time.UTC); !got.Equal(want) {
		t.Errorf("Next(%v) = %v, want %v (the full hour in Kolkata)", from, got.UTC(), want)
	}
}
