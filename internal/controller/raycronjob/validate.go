package raycronjob

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/conditions"
	"github.com/ray-operator/ray-operator/internal/invalidspec"
	"github.com/ray-operator/ray-operator/internal/passsteps"
	"github.com/ray-operator/ray-operator/internal/validation"
)

// reasonValid is the SpecValid condition's reason when the spec is valid.
const reasonValid = "ValidSpec"

// validate checks the RayCronJob (internal/validation) and parses its
// schedule. An invalid one is reported (invalidspec: KubeRay's Warning
// event) and gets the SpecValid condition False with the error, and nothing
// else: only a new spec can help, so the pass stops without a requeue.
func (r *Reconciler) validate(ctx context.Context, s *scope) (passsteps.Result, error) {
	err := validation.RayCronJobMetadata(s.cj.ObjectMeta)
	if err == nil {
		err = validation.RayCronJobSpec(s.cj, r.opts.Features)
	}
	if err == nil {
		s.schedule, err = validation.RayCronJobSchedule(&s.cj.Spec)
	}
	setSpecValid(&s.cj.Status, s.cj.Generation, s.now, err)
	if err != nil {
		invalidspec.Report(ctx, r.events, s.cj, rayv1.KindRayCronJob, err, reasonInvalidSpec)
		return passsteps.Result{Stop: true}, nil
	}
	return passsteps.Result{}, nil
}

// setSpecValid sets the SpecValid condition from the validation error; the
// transition time is now when the status changes.
func setSpecValid(status *rayv1.RayCronJobStatus, generation int64, now time.Time, err error) {
	at := conditions.At(metav1.NewTime(now), generation)
	if err != nil {
		conditions.MarkFalse(&status.Conditions, rayv1.RayCronJobSpecValid, reasonInvalidSpec, err.Error(), at)
		return
	}
	conditions.MarkTrue(&status.Conditions, rayv1.RayCronJobSpecValid, reasonValid, "", at)
}
