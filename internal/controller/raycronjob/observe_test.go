package raycronjob

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/testing/wrappers"
)

// TestObservedStatus: status.active lists the owned RayJobs that have not
// finished and are not being deleted, oldest first; lastSuccessfulTime is
// the latest end of a Complete one and never goes back.
func TestObservedStatus(t *testing.T) {
	ref := func(at time.Time) corev1.ObjectReference {
		return corev1.ObjectReference{APIVersion: "ray.io/v1", Kind: "RayJob", Namespace: testNS, Name: jobName(at), UID: ownedJob(at).UID}
	}
	ts := func(at time.Time) *metav1.Time { return &metav1.Time{Time: at} }
	otherOwner := wrappers.MakeRayCronJob("other", testNS).Obj()
	tests := map[string]struct {
		jobs           []*wrappers.RayJobWrapper
		lastSuccessful *metav1.Time
		want           rayv1.RayCronJobStatus
	}{
		"none": {},
		"every state": {
			jobs: []*wrappers.RayJobWrapper{
				ownedJob(minute(4)).DeploymentStatus(rayv1.JobDeploymentStatusRunning),
				ownedJob(minute(1)),
				ownedJob(minute(2)).DeploymentStatus(rayv1.JobDeploymentStatusInitializing),
				ownedJob(minute(3)).DeploymentStatus(rayv1.JobDeploymentStatusSuspended),
				ownedJob(minute(5)).DeploymentStatus(rayv1.JobDeploymentStatusRetrying),
				ownedJob(minute(6)).DeploymentStatus(rayv1.JobDeploymentStatusRunning).Terminating(minute(7)),
				ownedJob(minute(7)).Finished(true, minute(8)),
				ownedJob(minute(8)).Finished(true, minute(9)),
				ownedJob(minute(9)).Finished(false, minute(10)),
				ownedJob(minute(10)).DeploymentStatus(rayv1.JobDeploymentStatusValidationFailed),
			},
			want: rayv1.RayCronJobStatus{
				Active:             []corev1.ObjectReference{ref(minute(1)), ref(minute(2)), ref(minute(3)), ref(minute(4)), ref(minute(5))},
				LastSuccessfulTime: ts(minute(9)),
			},
		},
		"never back": {jobs: []*wrappers.RayJobWrapper{ownedJob(minute(1)).Finished(true, minute(2))}, lastSuccessful: ts(minute(30)),
			want: rayv1.RayCronJobStatus{LastSuccessfulTime: ts(minute(30))}},
		"forward": {jobs: []*wrappers.RayJobWrapper{ownedJob(minute(1)).Finished(true, minute(40))}, lastSuccessful: ts(minute(30)),
			want: rayv1.RayCronJobStatus{LastSuccessfulTime: ts(minute(40))}},
		"owned by another RayCronJob": {jobs: []*wrappers.RayJobWrapper{
			wrappers.MakeRayJob("other-1", testNS).Label(rayv1.LabelCronJobName, testName).ControlledBy(otherOwner, rayv1.KindRayCronJob)}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var items []rayv1.RayJob
			for _, w := range tc.jobs {
				items = append(items, *w.Obj())
			}
			got := rayv1.RayCronJobStatus{LastSuccessfulTime: tc.lastSuccessful}
			jobs := classify(cronJob().Obj(), items)
			recordLastSuccess(&got, jobs.succeeded)
			got.Active = activeRefs(jobs.active)
			if diff := cmp.Diff(tc.want, got, timeEqual); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
		})
	}
}
