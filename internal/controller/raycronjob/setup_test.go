package raycronjob

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// TestRayJobLifecycle: a RayJob wakes its RayCronJob when it appears, goes
// away, changes deployment status or starts being deleted; not for
// anything else the RayJob controller writes.
func TestRayJobLifecycle(t *testing.T) {
	base := ownedJob(minute(1)).DeploymentStatus(rayv1.JobDeploymentStatusRunning)
	tests := map[string]struct {
		mutate func(*rayv1.RayJob)
		want   bool
	}{
		"dashboard URL only":  {mutate: func(j *rayv1.RayJob) { j.Status.DashboardURL = "x:8265" }},
		"Ray job status only": {mutate: func(j *rayv1.RayJob) { j.Status.JobStatus = rayv1.JobStatusRunning }},
		"deployment status":   {mutate: func(j *rayv1.RayJob) { j.Status.JobDeploymentStatus = rayv1.JobDeploymentStatusComplete }, want: true},
		"deletion started":    {mutate: func(j *rayv1.RayJob) { j.DeletionTimestamp = &metav1.Time{Time: minute(2)} }, want: true},
	}
	p := rayJobLifecycle()
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			old, updated := base.Obj(), base.Obj()
			tc.mutate(updated)
			if got := p.Update(event.UpdateEvent{ObjectOld: old, ObjectNew: updated}); got != tc.want {
				t.Errorf("Update = %v, want %v", got, tc.want)
			}
		})
	}
	if !p.Create(event.CreateEvent{Object: base.Obj()}) || !p.Delete(event.DeleteEvent{Object: base.Obj()}) {
		t.Error("creations and deletions must pass")
	}
}
