package raycronjob

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
	actionSuspend = "Suspend"
	actionCreate  = "Create"
	actionDelete  = "Delete"
	actionSkip    = "Skip"
)
