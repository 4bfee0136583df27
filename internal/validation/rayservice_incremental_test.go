package validation

import (
	"strings"
	"testing"

	"k8s.io/utils/ptr"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/features"
)

// TestRayServiceSpecIncrementalOptions: with the RayServiceIncrementalUpgrade
// gate on, an incremental RayService needs the autoscaler and complete
// options; with the gate off the strategy is inert and not checked.
func TestRayServiceSpecIncrementalOptions(t *testing.T) {
	rs := &rayv1.RayService{Spec: rayv1.RayServiceSpec{
		RayClusterSpec: *validSpec(),
		UpgradeStrategy: &rayv1.RayServiceUpgradeStrategy{
			Type: ptr.To(rayv1.RayServiceNewClusterWithIncrementalUpgrade),
		},
	}}
	on := gates{features.RayServiceIncrementalUpgrade: true}
	err := RayServiceSpec(rs, on)
	if err == nil || err.Error() != "The RayService spec is invalid: Ray Autoscaler is required for NewClusterWithIncrementalUpgrade" {
		t.Errorf("without the autoscaler: %v", err)
	}
	rs.Spec.RayClusterSpec.EnableInTreeAutoscaling = ptr.To(true)
	if err := RayServiceSpec(rs, on); err == nil || !strings.Contains(err.Error(), "ClusterUpgradeOptions are required") {
		t.Errorf("without options: %v", err)
	}
	rs.Spec.UpgradeStrategy.ClusterUpgradeOptions = &rayv1.ClusterUpgradeOptions{
		StepSizePercent: ptr.To[int32](10), IntervalSeconds: ptr.To[int32](30), GatewayClassName: "istio",
	}
	if err := RayServiceSpec(rs, on); err != nil {
		t.Errorf("complete options: %v", err)
	}
	rs.Spec.UpgradeStrategy.ClusterUpgradeOptions = nil
	if err := RayServiceSpec(rs, gates{}); err != nil {
		t.Errorf("gate off: %v", err)
	}
}
