package raycronjob

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

func TestRayJobName(t *testing.T) {
	cj := cronJob().Obj()
	tests := map[string]struct {
		at   time.Time
		want string
	}{
		"a minute":                   {at: time.Date(2026, 3, 2, 10, 1, 0, 0, time.UTC), want: "cron-29540761"},
		"seconds in the same minute": {at: time.Date(2026, 3, 2, 10, 1, 59, 0, time.UTC), want: "cron-29540761"},
		"another zone, same instant": {at: time.Date(2026, 3, 2, 11, 1, 0, 0, time.FixedZone("CET", 3600)), want: "cron-29540761"},
		"the epoch":                  {at: time.Unix(0, 0), want: "cron-0"},
		"8 digits until 2160":        {at: time.Date(2160, 1, 1, 0, 0, 0, 0, time.UTC), want: "cron-99930240"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := rayJobName(cj, tc.at); got != tc.want {
				t.Errorf("rayJobName = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestBuildRayJobCopies: the RayJob's spec is a copy of jobTemplate (a
// change to one never reaches the other), and nothing else of the
// RayCronJob (labels, annotations) is copied, as in KubeRay.
func TestBuildRayJobCopies(t *testing.T) {
	w := cronJob()
	w.Labels = map[string]string{"team": "a"}
	w.Annotations = map[string]string{"note": "x"}
	cj := w.Obj()
	job := buildRayJob(cj, minute(1))
	job.Spec.RayClusterSpec.WorkerGroupSpecs[0].GroupName = "changed"
	job.Spec.Entrypoint = "changed"
	if diff := cmp.Diff(cronJob().Obj().Spec.JobTemplate, cj.Spec.JobTemplate); diff != "" {
		t.Errorf("jobTemplate changed through the RayJob (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{rayv1.LabelCronJobName: "cron"}, job.Labels); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{rayv1.AnnotationCronJobScheduledTimestamp: "2026-03-02T10:01:00Z"}, job.Annotations); diff != "" {
		t.Errorf("annotations (-want +got):\n%s", diff)
	}
}

func TestScheduledTime(t *testing.T) {
	job := ownedJob(minute(1)).Created(minute(5)).Obj()
	if got := scheduledTime(job); !got.Equal(minute(1)) {
		t.Errorf("from the annotation: %v, want 10:01", got)
	}
	job.Annotations[rayv1.AnnotationCronJobScheduledTimestamp] = "yesterday"
	if got := scheduledTime(job); !got.Equal(minute(5)) {
		t.Errorf("broken annotation: %v, want the creation time 10:05", got)
	}
}
