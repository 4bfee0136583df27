package validation

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/testing/wrappers"
)

func TestRollingUpdateOptions(t *testing.T) {
	num, pct := intstr.FromInt32, intstr.FromString
	opts := func(surge, unavailable *intstr.IntOrString) *rayv1.RayClusterRollingUpdateOptions {
		return &rayv1.RayClusterRollingUpdateOptions{MaxSurge: surge, MaxUnavailable: unavailable}
	}
	rolling := ptr.To(rayv1.RayClusterRollingUpdate)
	cases := map[string]struct {
		strategy   rayv1.RayClusterUpgradeStrategy
		numOfHosts int32
		wantErr    string
	}{
		"defaults":                {strategy: rayv1.RayClusterUpgradeStrategy{Type: rolling}},
		"numbers":                 {strategy: rayv1.RayClusterUpgradeStrategy{Type: rolling, RollingUpdate: opts(ptr.To(num(1)), ptr.To(num(0)))}},
		"percentages":             {strategy: rayv1.RayClusterUpgradeStrategy{Type: rolling, RollingUpdate: opts(ptr.To(pct("200%")), ptr.To(pct("100%")))}},
		"only one limit set to 0": {strategy: rayv1.RayClusterUpgradeStrategy{Type: rolling, RollingUpdate: opts(nil, ptr.To(num(0)))}},
		"both 0": {strategy: rayv1.RayClusterUpgradeStrategy{Type: rolling, RollingUpdate: opts(ptr.To(pct("0%")), ptr.To(num(0)))},
			wantErr: "maxUnavailable and maxSurge may not both be 0"},
		"negative surge": {strategy: rayv1.RayClusterUpgradeStrategy{Type: rolling, RollingUpdate: opts(ptr.To(num(-1)), nil)},
			wantErr: "upgradeStrategy.rollingUpdate.maxSurge is -1; it must not be negative"},
		"unavailable over 100%": {strategy: rayv1.RayClusterUpgradeStrategy{Type: rolling, RollingUpdate: opts(nil, ptr.To(pct("150%")))},
			wantErr: `upgradeStrategy.rollingUpdate.maxUnavailable is "150%"; it must be a non-negative integer or a percentage of at most 100%`},
		"not a percentage": {strategy: rayv1.RayClusterUpgradeStrategy{Type: rolling, RollingUpdate: opts(ptr.To(pct("two")), nil)},
			wantErr: `upgradeStrategy.rollingUpdate.maxSurge is "two"`},
		"options without the type": {strategy: rayv1.RayClusterUpgradeStrategy{Type: ptr.To(rayv1.RayClusterRecreate), RollingUpdate: opts(nil, nil)},
			wantErr: "upgradeStrategy.rollingUpdate may be set only with upgradeStrategy.type RollingUpdate"},
		"multi-host group": {strategy: rayv1.RayClusterUpgradeStrategy{Type: rolling}, numOfHosts: 2,
			wantErr: "upgradeStrategy RollingUpdate does not support worker group small with numOfHosts 2"},
		"multi-host group without rolling": {strategy: rayv1.RayClusterUpgradeStrategy{Type: ptr.To(rayv1.RayClusterRecreate)}, numOfHosts: 2},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rc := &rayv1.RayCluster{Spec: rayv1.RayClusterSpec{UpgradeStrategy: &tc.strategy,
				WorkerGroupSpecs: []rayv1.WorkerGroupSpec{{GroupName: "small", NumOfHosts: max(tc.numOfHosts, 1)}}}}
			checkErr(t, RayClusterUpgradeOptions(rc), tc.wantErr)
		})
	}
}

func TestRollingUpdateRefusedInOwnedClusters(t *testing.T) {
	job := rayJob()
	job.Spec.RayClusterSpec.UpgradeStrategy = &rayv1.RayClusterUpgradeStrategy{Type: ptr.To(rayv1.RayClusterRollingUpdate)}
	if err := RayJobSpec(&job.Spec, nil, gates{}); err == nil || !strings.Contains(err.Error(), "upgradeStrategy cannot be set when RayCluster is created by RayJob") {
		t.Errorf("RayJob: err = %v", err)
	}
	if err := OwnedRollingUpdate(job.Spec.RayClusterSpec); err == nil || err.Error() != errRollingUpdateOwned.Error() {
		t.Errorf("OwnedRollingUpdate = %v, want %v", err, errRollingUpdateOwned)
	}
	svc := wrappers.MakeRayService("svc", "ns").Obj()
	svc.Spec.RayClusterSpec.UpgradeStrategy = &rayv1.RayClusterUpgradeStrategy{Type: ptr.To(rayv1.RayClusterRollingUpdate)}
	if err := RayServiceSpec(svc, gates{}); err == nil || !strings.Contains(err.Error(), errRollingUpdateOwned.Error()) {
		t.Errorf("RayService: err = %v, want %q", err, errRollingUpdateOwned)
	}
	svc.Spec.RayClusterSpec.UpgradeStrategy = &rayv1.RayClusterUpgradeStrategy{Type: ptr.To(rayv1.RayClusterRecreate)}
	if err := RayServiceSpec(svc, gates{}); err != nil {
		t.Errorf("RayService with Recreate (KubeRay accepts it here): %v", err)
	}
}
