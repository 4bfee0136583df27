// Package webhooks serves the operator's validating admission webhooks and
// keeps their serving certificate: KubeRay's vraycluster.kb.io,
// vrayjob.kb.io and vrayservice.kb.io, with its paths and checks, and a
// vraycronjob.kb.io of ours that runs the RayCronJob spec validation.
//
// The checks are internal/validation's, the same the controllers run, so a
// rule lives in one place. An invalid object is refused with an
// apierrors.NewInvalid listing field paths, as KubeRay's webhooks do.
package webhooks

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/validation"
)

//+kubebuilder:webhook:path=/validate-ray-io-v1-raycluster,mutating=false,failurePolicy=fail,sideEffects=None,groups=ray.io,resources=rayclusters,verbs=create;update,versions=v1,name=vraycluster.kb.io,admissionReviewVersions=v1
//+kubebuilder:webhook:path=/validate-ray-io-v1-rayjob,mutating=false,failurePolicy=fail,sideEffects=None,groups=ray.io,resources=rayjobs,verbs=create;update,versions=v1,name=vrayjob.kb.io,admissionReviewVersions=v1
//+kubebuilder:webhook:path=/validate-ray-io-v1-rayservice,mutating=false,failurePolicy=fail,sideEffects=None,groups=ray.io,resources=rayservices,verbs=create;update,versions=v1,name=vrayservice.kb.io,admissionReviewVersions=v1
//+kubebuilder:webhook:path=/validate-ray-io-v1-raycronjob,mutating=false,failurePolicy=fail,sideEffects=None,groups=ray.io,resources=raycronjobs,verbs=create;update,versions=v1,name=vraycronjob.kb.io,admissionReviewVersions=v1

// check returns the field errors of an object; a validator refuses the
// object when there is any.
type check[T rayv1Object] func(T) field.ErrorList

// rayv1Object is what the validators admit: a ray.io/v1 object.
type rayv1Object interface {
	runtime.Object
	GetName() string
}

// validator turns a check into an admission.Validator: create and update
// run it on the new object (KubeRay's webhooks compare nothing with the old
// one; immutable fields are guarded by the CRDs' CEL rules), delete is
// always allowed.
type validator[T rayv1Object] struct {
	kind  string
	check check[T]
}

func (v validator[T]) ValidateCreate(_ context.Context, obj T) (admission.Warnings, error) {
	return nil, v.validate(obj)
}

func (v validator[T]) ValidateUpdate(_ context.Context, _, obj T) (admission.Warnings, error) {
	return nil, v.validate(obj)
}

func (v validator[T]) ValidateDelete(context.Context, T) (admission.Warnings, error) {
	return nil, nil
}

func (v validator[T]) validate(obj T) error {
	errs := v.check(obj)
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(rayv1.GroupVersion.WithKind(v.kind).GroupKind(), obj.GetName(), errs)
}

var namePath = field.NewPath("metadata", "name")

// rayClusterErrors returns a function checking the name (at most 53
// characters, DNS-1035), unique worker group names and, beyond KubeRay's
// webhook, the gated alpha fields (networkPolicy, tlsOptions) with the
// controller's messages, so a cluster the controller would refuse is not
// stored; likewise idleTerminationOptions and upgradeStrategy RollingUpdate's
// limits (not KubeRay's fields).
func rayClusterErrors(gates validation.FeatureGates) check[*rayv1.RayCluster] {
	return func(rc *rayv1.RayCluster) field.ErrorList {
		var errs field.ErrorList
		if err := validation.RayClusterMetadata(rc.ObjectMeta); err != nil {
			errs = append(errs, field.Invalid(namePath, rc.Name, err.Error()))
		}
		seen := map[string]bool{}
		for i, g := range rc.Spec.WorkerGroupSpecs {
			if seen[g.GroupName] {
				errs = append(errs, field.Invalid(field.NewPath("spec", "workerGroupSpecs").Index(i).Child("groupName"),
					g.GroupName, "worker group names must be unique"))
				break
			}
			seen[g.GroupName] = true
		}
		if err := validation.RayClusterGatedFields(&rc.Spec, rc.Annotations, gates); err != nil {
			errs = append(errs, field.Invalid(field.NewPath("spec"), field.OmitValueType{}, err.Error()))
		}
		if err := validation.IdleTerminationOptions(&rc.Spec); err != nil {
			errs = append(errs, field.Invalid(idlePath, field.OmitValueType{}, err.Error()))
		}
		if err := validation.RollingUpdateOptions(&rc.Spec); err != nil {
			errs = append(errs, field.Invalid(upgradePath, field.OmitValueType{}, err.Error()))
		}
		return errs
	}
}

// rayJobErrors: the name (at most 47 characters, DNS-1035) and, beyond
// KubeRay's webhook, no idleTerminationOptions and no upgradeStrategy
// RollingUpdate in its cluster spec.
func rayJobErrors(job *rayv1.RayJob) field.ErrorList {
	var errs field.ErrorList
	if err := validation.RayJobMetadata(job.ObjectMeta); err != nil {
		errs = append(errs, field.Invalid(namePath, job.Name, err.Error()))
	}
	if err := validation.OwnedIdleTermination(job.Spec.RayClusterSpec); err != nil {
		errs = append(errs, field.Invalid(ownedIdlePath, field.OmitValueType{}, err.Error()))
	}
	if err := validation.OwnedRollingUpdate(job.Spec.RayClusterSpec); err != nil {
		errs = append(errs, field.Invalid(ownedUpgradePath, field.OmitValueType{}, err.Error()))
	}
	return errs
}

// The paths of idleTerminationOptions and upgradeStrategy.
var (
	idlePath         = field.NewPath("spec", "idleTerminationOptions")
	ownedIdlePath    = field.NewPath("spec", "rayClusterSpec", "idleTerminationOptions")
	upgradePath      = field.NewPath("spec", "upgradeStrategy")
	ownedUpgradePath = field.NewPath("spec", "rayClusterSpec", "upgradeStrategy")
)

// rayServiceErrors: the name (at most 47 characters, DNS-1035), the
// ray.io/initializing-timeout annotation and (not KubeRay's) the upgrade
// deadline fields of spec.upgradeStrategy and no idleTerminationOptions nor
// upgradeStrategy RollingUpdate in its cluster spec.
func rayServiceErrors(rs *rayv1.RayService) field.ErrorList {
	var errs field.ErrorList
	nameOnly := rs.ObjectMeta
	nameOnly.Annotations = nil
	if err := validation.RayServiceMetadata(nameOnly); err != nil {
		errs = append(errs, field.Invalid(namePath, rs.Name, err.Error()))
	}
	if _, err := validation.InitializingTimeout(rs.Annotations); err != nil {
		path := field.NewPath("metadata", "annotations").Key(rayv1.AnnotationInitializingTimeout)
		errs = append(errs, field.Invalid(path, rs.Annotations[rayv1.AnnotationInitializingTimeout], err.Error()))
	}
	if err := validation.RayServiceUpgradeDeadline(rs.Spec.UpgradeStrategy); err != nil {
		errs = append(errs, field.Invalid(field.NewPath("spec", "upgradeStrategy"), field.OmitValueType{}, err.Error()))
	}
	if err := validation.OwnedIdleTermination(&rs.Spec.RayClusterSpec); err != nil {
		errs = append(errs, field.Invalid(ownedIdlePath, field.OmitValueType{}, err.Error()))
	}
	if err := validation.OwnedRollingUpdate(&rs.Spec.RayClusterSpec); err != nil {
		errs = append(errs, field.Invalid(field.NewPath("spec", "rayClusterConfig", "upgradeStrategy"), field.OmitValueType{}, err.Error()))
	}
	return errs
}

// rayCronJobErrors returns a function checking the name and the whole spec
// (schedule, time zone, policies, jobTemplate), as the RayCronJob
// controller does with the same gates. The spec's messages name their own
// field (spec.schedule, spec.jobTemplate: ...).
func rayCronJobErrors(gates validation.FeatureGates) check[*rayv1.RayCronJob] {
	return func(cj *rayv1.RayCronJob) field.ErrorList {
		var errs field.ErrorList
		if err := validation.RayCronJobMetadata(cj.ObjectMeta); err != nil {
			errs = append(errs, field.Invalid(namePath, cj.Name, err.Error()))
		}
		if err := validation.RayCronJobSpec(cj, gates); err != nil {
			errs = append(errs, field.Invalid(field.NewPath("spec"), field.OmitValueType{}, err.Error()))
		}
		return errs
	}
}
