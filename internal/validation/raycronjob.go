package validation

import (
	"errors"
	"fmt"
	"strings"
	"time"

	// The time zone database is embedded, as KubeRay's operator embeds it,
	// so that spec.timeZone resolves in an image without /usr/share/zoneinfo.
	_ "time/tzdata"

	"github.com/robfig/cron/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8svalidation "k8s.io/apimachinery/pkg/util/validation"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// MaxRayCronJobNameLength leaves room in MaxRayJobNameLength for the
// "-<minutes since the epoch>" suffix of the RayJobs a RayCronJob creates
// (KubeRay's 53 - 6 - 11).
const MaxRayCronJobNameLength = MaxRayJobNameLength - 11

// RayCronJobMetadata checks a RayCronJob's name: short enough, and a DNS-1035
// label, so that the names of its RayJobs pass RayJobMetadata. (KubeRay
// checks only the length; a name it accepts that is not a DNS-1035 label
// gives RayJobs that all fail validation.)
func RayCronJobMetadata(obj metav1.ObjectMeta) error {
	if len(obj.Name) > MaxRayCronJobNameLength {
		return fmt.Errorf("RayCronJob name should be no more than %d characters, got %d", MaxRayCronJobNameLength, len(obj.Name))
	}
	if errs := k8svalidation.IsDNS1035Label(obj.Name); len(errs) > 0 {
		return fmt.Errorf("RayCronJob name should be a valid DNS1035 label: %v", errs)
	}
	return nil
}

var errScheduleTZ = errors.New("spec.schedule must not set a time zone (TZ= or CRON_TZ=): use spec.timeZone")

// RayCronJobSchedule parses spec.schedule as KubeRay does: a standard cron
// expression (five fields) or a descriptor (@hourly, @every 90m, ...), in
// spec.timeZone when set and else in the operator's local time zone. A
// schedule that names a time zone itself is refused.
func RayCronJobSchedule(spec *rayv1.RayCronJobSpec) (cron.Schedule, error) {
	if strings.Contains(spec.Schedule, "TZ") {
		return nil, errScheduleTZ
	}
	expr := spec.Schedule
	if tz := spec.TimeZone; tz != nil {
		if strings.TrimSpace(*tz) == "" {
			return nil, errors.New("spec.timeZone must not be empty: leave it unset for the operator's local time zone")
		}
		if _, err := time.LoadLocation(*tz); err != nil || strings.ContainsAny(*tz, " \t") {
			return nil, fmt.Errorf("spec.timeZone %q is not a known IANA time zone name", *tz)
		}
		expr = "TZ=" + *tz + " " + expr
	}
	schedule, err := cron.ParseStandard(expr)
	if err != nil {
		return nil, fmt.Errorf("spec.schedule %q is not a valid cron schedule: %w", spec.Schedule, err)
	}
	if schedule.Next(time.Unix(0, 0)).IsZero() {
		// Cron fields repeat within four years and robfig/cron looks five
		// years ahead, so this is a date that never comes (30 February).
		return nil, fmt.Errorf("spec.schedule %q never fires", spec.Schedule)
	}
	if spec.TimeZone == nil {
		return inLocalZone{schedule}, nil
	}
	return schedule, nil
}

// inLocalZone evaluates a schedule without a time zone in the operator's
// local time zone, whatever the zone of the time it is given (robfig/cron
// would use that time's zone).
type inLocalZone struct{ cron.Schedule }

// Next returns the first time of the schedule after t.
func (s inLocalZone) Next(t time.Time) time.Time { return s.Schedule.Next(t.In(time.Local)) }

// RayCronJobSpec checks a RayCronJob's spec: the schedule and time zone
// (RayCronJobSchedule), the batch/v1 fields (which the CRD checks too, for
// objects that bypassed it), and jobTemplate exactly as a RayJob's spec,
// with the annotations its RayJobs get (none that the rules read).
func RayCronJobSpec(cj *rayv1.RayCronJob, gates FeatureGates) error {
	if _, err := RayCronJobSchedule(&cj.Spec); err != nil {
		return err
	}
	if err := rayCronJobPolicies(&cj.Spec); err != nil {
		return err
	}
	if err := RayJobSpec(&cj.Spec.JobTemplate, nil, gates); err != nil {
		return fmt.Errorf("spec.jobTemplate: %w", err)
	}
	return nil
}

// rayCronJobPolicies checks the batch/v1 CronJob fields.
func rayCronJobPolicies(spec *rayv1.RayCronJobSpec) error {
	switch spec.ConcurrencyPolicy {
	case "", rayv1.AllowConcurrent, rayv1.ForbidConcurrent, rayv1.ReplaceConcurrent:
	default:
		return fmt.Errorf("spec.concurrencyPolicy %q is not one of %s, %s or %s",
			spec.ConcurrencyPolicy, rayv1.AllowConcurrent, rayv1.ForbidConcurrent, rayv1.ReplaceConcurrent)
	}
	if d := spec.StartingDeadlineSeconds; d != nil && *d < 0 {
		return fmt.Errorf("spec.startingDeadlineSeconds must be a non-negative number of seconds, got %d", *d)
	}
	if n := spec.SuccessfulJobsHistoryLimit; n != nil && *n < 0 {
		return fmt.Errorf("spec.successfulJobsHistoryLimit must be a non-negative number of RayJobs, got %d", *n)
	}
	if n := spec.FailedJobsHistoryLimit; n != nil && *n < 0 {
		return fmt.Errorf("spec.failedJobsHistoryLimit must be a non-negative number of RayJobs, got %d", *n)
	}
	return nil
}
