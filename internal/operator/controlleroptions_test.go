package operator

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	configv1alpha1 "github.com/ray-operator/ray-operator/api/config/v1alpha1"
	"github.com/ray-operator/ray-operator/internal/features"
)

func TestRayClusterOptions(t *testing.T) {
	env := map[string]string{
		configv1alpha1.EnvRayClusterDefaultRequeueSeconds: "42",
		configv1alpha1.EnvEnableGCSFTRedisCleanup:         "false",
		configv1alpha1.EnvEnableRandomPodDelete:           "true",
		configv1alpha1.EnvEnableRayHeadClusterIPService:   "true",
		configv1alpha1.EnvEnableInitContainerInjection:    "false",
	}
	knobs, _ := configv1alpha1.LoadKnobs(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	cases := map[string]struct {
		openShift, ingressOnOpenShift bool
		wantRoute                     bool
	}{
		"kubernetes":                    {},
		"openshift":                     {openShift: true, wantRoute: true},
		"openshift with ingress forced": {openShift: true, ingressOnOpenShift: true},
	}
	type fields struct {
		Requeue                           time.Duration
		Cleanup, Random, ClusterIP, Route bool
		NoInitContainer                   bool
		WatchNamespaces                   []string
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			k := knobs
			k.IngressOnOpenShift = tc.ingressOnOpenShift
			cfg := configv1alpha1.Configuration{WatchNamespace: "a,,b"}
			got := rayClusterOptions(Deps{Config: cfg, Knobs: k, Features: features.NewGate(), IsOpenShift: tc.openShift})
			want := fields{42 * time.Second, false, true, true, tc.wantRoute, true, []string{"a", "b"}}
			gotFields := fields{got.RequeueAfter, got.GCSFTRedisCleanup, got.RandomPodDelete, got.HeadServiceClusterIP,
				got.UseRoute, got.Pod.DisableInitContainerInjection, got.WatchNamespaces}
			if diff := cmp.Diff(want, gotFields); diff != "" {
				t.Errorf("rayClusterOptions() (-want +got):\n%s", diff)
			}
		})
	}
}
