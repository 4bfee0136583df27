package raycronjob

import (
	"k8s.io/apimachinery/pkg/runtime"
)

// Event reasons. KubeRay emits InvalidRayCronJobSpec and
// SuspendedRayCronJob; the RayJob events follow the RayCluster ones
// (CreatedRayCluster, ...); the skips keep batch/v1 CronJob's reasons, which
// CronJob users already alert on.
const (
	reasonInvalidSpec          = "InvalidRayCronJobSpec"
	reasonSuspended            = "SuspendedRayCronJob"
	reasonCreatedRayJob        = "CreatedRayJob"
	reasonFailedToCreateRayJob = "FailedToCreateRayJob"
	reasonDeletedRayJob        = "DeletedRayJob"
	reasonFailedToDeleteRayJob = "FailedToDeleteRayJob"
	reasonJobAlreadyActive     = "JobAlreadyActive"
	reasonMissSchedule         = "MissSchedule"
	reasonTooManyMissedTimes   = "TooManyMissedTimes"
)

// Event actions (the events.k8s.io "action" field).
const (
	actionValidate = "Validate"
	actionSuspend  = "Suspend"
	actionCreate   = "Create"
	actionDelete   = "Delete"
	actionSkip     = "Skip"
)

// event records an event about the RayCronJob, with related (a RayJob, or
// nil) as the related object; a nil recorder records nothing.
func (r *Reconciler) event(regarding, related runtime.Object, eventType, reason, action, note string, args ...any) {
	if r.Recorder != nil {
		r.Recorder.Eventf(regarding, related, eventType, reason, action, note, args...)
	}
}
