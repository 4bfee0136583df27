package raycronjob

import (
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/clusterowner"
)

// rayJobName is KubeRay's name of the RayJob of one schedule time:
// "<RayCronJob name>-<minutes since the epoch>". It is the same on every
// pass and every operator, so a create that was already done (a stale view,
// a restart) fails with AlreadyExists instead of making a second RayJob.
func rayJobName(cj *rayv1.RayCronJob, scheduled time.Time) string {
	return cj.Name + "-" + strconv.FormatInt(scheduled.Unix()/60, 10)
}

// buildRayJob returns the RayJob of the schedule time `scheduled`: KubeRay's
// name, label ray.io/cronjob-name, annotation
// ray.io/cronjob-scheduled-timestamp (RFC 3339, UTC), a copy of jobTemplate
// as its spec and the RayCronJob as controller. Nothing else of the
// RayCronJob is copied, as in KubeRay.
func buildRayJob(cj *rayv1.RayCronJob, scheduled time.Time) *rayv1.RayJob {
	return &rayv1.RayJob{
		ObjectMeta: metav1.ObjectMeta{
			Name:            rayJobName(cj, scheduled),
			Namespace:       cj.Namespace,
			Labels:          map[string]string{rayv1.LabelCronJobName: cj.Name},
			Annotations:     map[string]string{rayv1.AnnotationCronJobScheduledTimestamp: scheduled.UTC().Format(time.RFC3339)},
			OwnerReferences: []metav1.OwnerReference{clusterowner.ControllerRef(cj, rayv1.KindRayCronJob)},
		},
		Spec: *cj.Spec.JobTemplate.DeepCopy(),
	}
}

// scheduledTime is the schedule time a RayJob was created for, from its
// annotation; its creation time when the annotation is missing or broken.
func scheduledTime(job *rayv1.RayJob) time.Time {
	if t, err := time.Parse(time.RFC3339, job.Annotations[rayv1.AnnotationCronJobScheduledTimestamp]); err == nil {
		return t
	}
	return job.CreationTimestamp.Time
}
