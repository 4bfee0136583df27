package validation

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8svalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/component-base/featuregate"
	"k8s.io/utils/ptr"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/features"
	"github.com/ray-operator/ray-operator/internal/incrementalupgrade"
)

// MaxRayServiceNameLength leaves room for the "-<5 random characters>"
// suffix of the RayService's cluster names within MaxRayClusterNameLength.
const MaxRayServiceNameLength = MaxRayClusterNameLength - 6

// RayServiceMetadata checks a RayService's name and its
// ray.io/initializing-timeout annotation (what the webhook checks too).
func RayServiceMetadata(obj metav1.ObjectMeta) error {
	if len(obj.Name) > MaxRayServiceNameLength {
		return fmt.Errorf("RayService name should be no more than %d characters", MaxRayServiceNameLength)
	}
	if errs := k8svalidation.IsDNS1035Label(obj.Name); len(errs) > 0 {
		return fmt.Errorf("RayService name should be a valid DNS1035 label: %v", errs)
	}
	if _, err := InitializingTimeout(obj.Annotations); err != nil {
		return err
	}
	return nil
}

// InitializingTimeout parses ray.io/initializing-timeout: a positive Go
// duration or a positive number of seconds. Zero means no timeout.
func InitializingTimeout(annotations map[string]string) (time.Duration, error) {
	text := annotations[rayv1.AnnotationInitializingTimeout]
	if text == "" {
		return 0, nil
	}
	if d, err := time.ParseDuration(text); err == nil {
		if d <= 0 {
			return 0, fmt.Errorf("annotation %s must be a positive duration, got: %s", rayv1.AnnotationInitializingTimeout, text)
		}
		return d, nil
	}
	if n, err := strconv.Atoi(text); err == nil {
		if n <= 0 {
			return 0, fmt.Errorf("annotation %s must be a positive integer (seconds), got: %s", rayv1.AnnotationInitializingTimeout, text)
		}
		return time.Duration(n) * time.Second, nil
	}
	return 0, fmt.Errorf("annotation %s has invalid format: %s. Expected Go duration format (e.g., '5m', '1h') or positive integer seconds",
		rayv1.AnnotationInitializingTimeout, text)
}

var errHeadServiceName = errors.New("spec.rayClusterConfig.headGroupSpec.headService.metadata.name should not be set")

// RayServiceSpec checks a RayService's spec: the embedded cluster spec as a
// RayCluster's, no named head Service (the RayService names its own), a
// known upgrade type, a non-negative deletion delay, no Kubernetes token
// authentication (RayService cannot pass such tokens to Serve) and, for an
// incremental upgrade with its gate on, complete upgrade options.
func RayServiceSpec(rs *rayv1.RayService, gates FeatureGates) error {
	spec := &rs.Spec
	if auth := spec.RayClusterSpec.AuthOptions; auth != nil && ptr.Deref(auth.EnableK8sTokenAuth, false) {
		return invalidService(errors.New("K8s token auth mode is currently not supported for RayService"))
	}
	if err := RayClusterSpec(&spec.RayClusterSpec, rs.Annotations, gates); err != nil {
		return invalidService(err)
	}
	if err := OwnedIdleTermination(&spec.RayClusterSpec); err != nil {
		return invalidService(err)
	}
	if err := OwnedRollingUpdate(&spec.RayClusterSpec); err != nil {
		return invalidService(err)
	}
	if svc := spec.RayClusterSpec.HeadGroupSpec.HeadService; svc != nil && svc.Name != "" {
		return invalidService(errHeadServiceName)
	}
	if s := spec.UpgradeStrategy; s != nil && s.Type != nil {
		switch *s.Type {
		case rayv1.RayServiceNewCluster, rayv1.RayServiceNewClusterWithIncrementalUpgrade, rayv1.RayServiceUpgradeNone:
		default:
			return invalidService(fmt.Errorf("Spec.UpgradeStrategy.Type value %s is invalid, valid options are %s, %s, or %s",
				*s.Type, rayv1.RayServiceNewClusterWithIncrementalUpgrade, rayv1.RayServiceNewCluster, rayv1.RayServiceUpgradeNone))
		}
	}
	if err := RayServiceUpgradeDeadline(spec.UpgradeStrategy); err != nil {
		return invalidService(err)
	}
	if d := spec.RayClusterDeletionDelaySeconds; d != nil && *d < 0 {
		return invalidService(fmt.Errorf("Spec.RayClusterDeletionDelaySeconds should be a non-negative integer, got %d", *d))
	}
	if gates.Enabled(features.RayServiceIncrementalUpgrade) && incrementalupgrade.Requested(spec) {
		if err := incrementalupgrade.Validate(spec); err != nil {
			return invalidService(err)
		}
	}
	return nil
}

// RayServiceUpgradeDeadline checks the upgrade deadline fields (not KubeRay's):
// positive, and a retry back-off only with a timeout.
func RayServiceUpgradeDeadline(u *rayv1.RayServiceUpgradeStrategy) error {
	if u == nil {
		return nil
	}
	if t := u.PendingClusterTimeoutSeconds; t != nil && *t < 1 {
		return fmt.Errorf("Spec.UpgradeStrategy.PendingClusterTimeoutSeconds should be a positive integer, got %d", *t)
	}
	b := u.PendingClusterRetryBackoffSeconds
	if b != nil && *b < 1 {
		return fmt.Errorf("Spec.UpgradeStrategy.PendingClusterRetryBackoffSeconds should be a positive integer, got %d", *b)
	}
	if b != nil && u.PendingClusterTimeoutSeconds == nil {
		return errors.New("Spec.UpgradeStrategy.PendingClusterRetryBackoffSeconds needs Spec.UpgradeStrategy.PendingClusterTimeoutSeconds: only an upgrade abandoned after that timeout is retried")
	}
	return nil
}

func invalidService(err error) error {
	return fmt.Errorf("The RayService spec is invalid: %w", err) //nolint:staticcheck // KubeRay's message, kept verbatim
}

// NoFeatureGates is the gate set of a caller given none: every gate off.
type NoFeatureGates struct{}

// Enabled reports false for every feature.
func (NoFeatureGates) Enabled(featuregate.Feature) bool { return false }
