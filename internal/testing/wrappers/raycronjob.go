package wrappers

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// DefaultCronSchedule is the schedule of MakeRayCronJob: every minute.
const DefaultCronSchedule = "* * * * *"

// RayCronJobWrapper builds a RayCronJob.
type RayCronJobWrapper struct{ rayv1.RayCronJob }

// MakeRayCronJob returns a RayCronJob with UID "uid-<name>", generation 1,
// DefaultCronSchedule, no time zone, MakeRayJobSpec's jobTemplate, no
// batch/v1 fields and no status.
func MakeRayCronJob(name, namespace string) *RayCronJobWrapper {
	return &RayCronJobWrapper{rayv1.RayCronJob{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, UID: types.UID("uid-" + name), Generation: 1},
		Spec: rayv1.RayCronJobSpec{
			Schedule:    DefaultCronSchedule,
			JobTemplate: *MakeRayJobSpec(),
		},
	}}
}

// Obj returns a copy of the RayCronJob.
func (w *RayCronJobWrapper) Obj() *rayv1.RayCronJob { return w.DeepCopy() }

// Created sets metadata.creationTimestamp.
func (w *RayCronJobWrapper) Created(at time.Time) *RayCronJobWrapper {
	w.CreationTimestamp = metav1.Time{Time: at}
	return w
}

// Schedule sets spec.schedule.
func (w *RayCronJobWrapper) Schedule(schedule string) *RayCronJobWrapper {
	w.Spec.Schedule = schedule
	return w
}

// TimeZone sets spec.timeZone.
func (w *RayCronJobWrapper) TimeZone(tz string) *RayCronJobWrapper {
	w.Spec.TimeZone = ptr.To(tz)
	return w
}

// Suspend sets spec.suspend.
func (w *RayCronJobWrapper) Suspend(suspend bool) *RayCronJobWrapper {
	w.Spec.Suspend = suspend
	return w
}

// JobTemplate replaces spec.jobTemplate with a copy of spec.
func (w *RayCronJobWrapper) JobTemplate(spec *rayv1.RayJobSpec) *RayCronJobWrapper {
	w.Spec.JobTemplate = *spec.DeepCopy()
	return w
}

// ConcurrencyPolicy sets spec.concurrencyPolicy.
func (w *RayCronJobWrapper) ConcurrencyPolicy(policy rayv1.ConcurrencyPolicy) *RayCronJobWrapper {
	w.Spec.ConcurrencyPolicy = policy
	return w
}

// StartingDeadlineSeconds sets spec.startingDeadlineSeconds.
func (w *RayCronJobWrapper) StartingDeadlineSeconds(seconds int64) *RayCronJobWrapper {
	w.Spec.StartingDeadlineSeconds = ptr.To(seconds)
	return w
}

// HistoryLimits sets spec.successfulJobsHistoryLimit and
// spec.failedJobsHistoryLimit.
func (w *RayCronJobWrapper) HistoryLimits(successful, failed int32) *RayCronJobWrapper {
	w.Spec.SuccessfulJobsHistoryLimit, w.Spec.FailedJobsHistoryLimit = ptr.To(successful), ptr.To(failed)
	return w
}

// LastScheduleTime sets status.lastScheduleTime.
func (w *RayCronJobWrapper) LastScheduleTime(at time.Time) *RayCronJobWrapper {
	w.Status.LastScheduleTime = &metav1.Time{Time: at}
	return w
}
