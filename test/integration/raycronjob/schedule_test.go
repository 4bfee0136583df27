package raycronjob_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// TestRayJobsOnSchedule: nothing before the first schedule time, then one
// RayJob per minute with KubeRay's exact name, label, annotation, owner
// and spec (the jobTemplate as the API server stored and defaulted it), a
// status that lists them as active, and nothing in between.
func TestRayJobsOnSchedule(t *testing.T) {
	w := newWorld(t)
	cj, first := w.createCronJob(everyMinute("nightly").Obj())
	w.Eventually("the first pass (SpecValid)", func() (bool, error) {
		return len(w.cronJob("nightly").Status.Conditions) == 1, nil
	})
	if names := w.rayJobNames(); len(names) != 0 {
		t.Fatalf("RayJobs before the first schedule time: %v", names)
	}

	w.waitScheduled("nightly", first)
	jobs := w.rayJobs()
	if len(jobs) != 1 {
		t.Fatalf("RayJobs after the first time: %v", w.rayJobNames())
	}
	job := jobs[0]
	wantMeta := metav1.ObjectMeta{
		Name:        jobName("nightly", first),
		Labels:      map[string]string{"ray.io/cronjob-name": "nightly"},
		Annotations: map[string]string{"ray.io/cronjob-scheduled-timestamp": first.UTC().Format(time.RFC3339)},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "ray.io/v1", Kind: "RayCronJob", Name: "nightly", UID: cj.UID,
			Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}},
	}
	gotMeta := metav1.ObjectMeta{Name: job.Name, Labels: job.Labels, Annotations: job.Annotations, OwnerReferences: job.OwnerReferences}
	if diff := cmp.Diff(wantMeta, gotMeta); diff != "" {
		t.Errorf("RayJob metadata (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(cj.Spec.JobTemplate, job.Spec); diff != "" {
		t.Errorf("RayJob spec differs from the jobTemplate (-want +got):\n%s", diff)
	}

	second := first.Add(time.Minute)
	cj = w.waitScheduled("nightly", second)
	if diff := cmp.Diff(namesOf("nightly", first, second), w.rayJobNames()); diff != "" {
		t.Errorf("RayJobs (-want +got):\n%s", diff)
	}
	var active []string
	for _, ref := range cj.Status.Active {
		active = append(active, ref.Name)
		if ref.Kind != "RayJob" || ref.APIVersion != "ray.io/v1" || ref.Namespace != w.NS || ref.UID == "" {
			t.Errorf("active reference %+v", ref)
		}
	}
	if diff := cmp.Diff(namesOf("nightly", first, second), active); diff != "" {
		t.Errorf("status.active (-want +got):\n%s", diff)
	}
	w.WaitEvent("nightly", "CreatedRayJob")
}

// TestSuspendedCreatesNothing: a suspended RayCronJob creates no RayJob
// while time passes; after resuming, the times missed meanwhile run.
func TestSuspendedCreatesNothing(t *testing.T) {
	w := newWorld(t)
	_, first := w.createCronJob(everyMinute("paused").Suspend(true).Obj())
	// Time passes; a suspended RayCronJob asks for no requeue.
	w.clock.SetTime(first.Add(2*time.Minute + 10*time.Second))
	w.Eventually("the SuspendedRayCronJob event", func() (bool, error) {
		return len(w.Events("paused", "SuspendedRayCronJob")) > 0, nil
	})
	if names := w.rayJobNames(); len(names) != 0 {
		t.Fatalf("RayJobs while suspended: %v", names)
	}

	cj := &rayv1.RayCronJob{ObjectMeta: metav1.ObjectMeta{Name: "paused", Namespace: w.NS}}
	w.Update(cj, func() { cj.Spec.Suspend = false }) // retried: the controller may be writing the status
	w.waitScheduled("paused", first.Add(2*time.Minute))
	if diff := cmp.Diff(namesOf("paused", minutes(first, 3)...), w.rayJobNames()); diff != "" {
		t.Errorf("RayJobs after resuming (-want +got):\n%s", diff)
	}
}

// TestInvalidRayCronJob: an invalid schedule gets the event and the
// SpecValid condition, and no RayJob.
func TestInvalidRayCronJob(t *testing.T) {
	w := newWorld(t)
	w.createCronJob(everyMinute("broken").Schedule("CRON_TZ=UTC * * * * *").Obj())
	w.Eventually("SpecValid False", func() (bool, error) {
		cj := w.cronJob("broken")
		return len(cj.Status.Conditions) == 1 && cj.Status.Conditions[0].Status == metav1.ConditionFalse &&
			cj.Status.Conditions[0].Message == "spec.schedule must not set a time zone (TZ= or CRON_TZ=): use spec.timeZone", nil
	})
	w.WaitEvent("broken", "InvalidRayCronJobSpec")
	if names := w.rayJobNames(); len(names) != 0 {
		t.Errorf("RayJobs of an invalid RayCronJob: %v", names)
	}
}
