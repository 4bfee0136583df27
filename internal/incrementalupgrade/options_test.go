package incrementalupgrade

import (
	"testing"
	"time"

	"k8s.io/utils/ptr"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

func spec(autoscale bool, o *rayv1.ClusterUpgradeOptions) *rayv1.RayServiceSpec {
	return &rayv1.RayServiceSpec{
		RayClusterSpec: rayv1.RayClusterSpec{EnableInTreeAutoscaling: ptr.To(autoscale)},
		UpgradeStrategy: &rayv1.RayServiceUpgradeStrategy{
			Type: ptr.To(rayv1.RayServiceNewClusterWithIncrementalUpgrade), ClusterUpgradeOptions: o,
		},
	}
}

func options(surge, step, interval *int32, class string) *rayv1.ClusterUpgradeOptions {
	return &rayv1.ClusterUpgradeOptions{MaxSurgePercent: surge, StepSizePercent: step, IntervalSeconds: interval, GatewayClassName: class}
}

func TestValidate(t *testing.T) {
	i := ptr.To[int32]
	for name, tc := range map[string]struct {
		spec *rayv1.RayServiceSpec
		want string
	}{
		"valid":                       {spec(true, options(i(50), i(10), i(30), "istio")), ""},
		"unset surge defaults to 100": {spec(true, options(nil, i(100), i(30), "istio")), ""},
		"no autoscaler":               {spec(false, options(i(50), i(10), i(30), "istio")), "Ray Autoscaler is required for NewClusterWithIncrementalUpgrade"},
		"no options":                  {spec(true, nil), "ClusterUpgradeOptions are required for NewClusterWithIncrementalUpgrade"},
		"surge above 100":             {spec(true, options(i(101), i(10), i(30), "istio")), "maxSurgePercent must be between 0 and 100"},
		"surge negative":              {spec(true, options(i(-1), i(10), i(30), "istio")), "maxSurgePercent must be between 0 and 100"},
		"no step":                     {spec(true, options(i(50), nil, i(30), "istio")), "stepSizePercent must be between 0 and 100"},
		"step above 100":              {spec(true, options(i(100), i(101), i(30), "istio")), "stepSizePercent must be between 0 and 100"},
		"step above surge":            {spec(true, options(i(20), i(30), i(30), "istio")), "stepSizePercent must be less than or equal to maxSurgePercent"},
		"no interval":                 {spec(true, options(i(50), i(10), nil, "istio")), "intervalSeconds must be greater than 0"},
		"zero interval":               {spec(true, options(i(50), i(10), i(0), "istio")), "intervalSeconds must be greater than 0"},
		"no gateway class":            {spec(true, options(i(50), i(10), i(30), "")), "gatewayClassName is required for NewClusterWithIncrementalUpgrade"},
	} {
		t.Run(name, func(t *testing.T) {
			err := Validate(tc.spec)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tc.want {
				t.Errorf("Validate = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestOptionsOf(t *testing.T) {
	i := ptr.To[int32]
	got, err := OptionsOf(spec(true, options(nil, i(20), i(45), "istio")))
	if err != nil {
		t.Fatal(err)
	}
	want := Options{MaxSurgePercent: 100, StepSizePercent: 20, Interval: 45 * time.Second, GatewayClassName: "istio"}
	if got != want {
		t.Errorf("OptionsOf = %+v, want %+v", got, want)
	}
	if _, err := OptionsOf(spec(true, nil)); err == nil {
		t.Error("OptionsOf without options: no error")
	}
}

func TestRequested(t *testing.T) {
	if !Requested(spec(true, nil)) {
		t.Error("incremental type not recognised")
	}
	for _, s := range []*rayv1.RayServiceSpec{
		{}, {UpgradeStrategy: &rayv1.RayServiceUpgradeStrategy{}},
		{UpgradeStrategy: &rayv1.RayServiceUpgradeStrategy{Type: ptr.To(rayv1.RayServiceNewCluster)}},
	} {
		if Requested(s) {
			t.Errorf("Requested(%+v) = true", s.UpgradeStrategy)
		}
	}
}
