package raycluster

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	configv1alpha1 "github.com/ray-operator/ray-operator/api/config/v1alpha1"
	"github.com/ray-operator/ray-operator/internal/features"
)

func TestOptionsFrom(t *testing.T) {
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
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			k := knobs
			k.IngressOnOpenShift = tc.ingressOnOpenShift
			got := OptionsFrom(configv1alpha1.Configuration{}, k, features.NewGate(), tc.openShift)
			want := struct {
				Requeue                           time.Duration
				Cleanup, Random, ClusterIP, Route bool
				NoInitContainer                   bool
			}{42 * time.Second, false, true, true, tc.wantRoute, true}
			gotFields := struct {
				Requeue                           time.Duration
				Cleanup, Random, ClusterIP, Route bool
				NoInitContainer                   bool
			}{got.RequeueAfter, got.GCSFTRedisCleanup, got.RandomPodDelete, got.HeadServiceClusterIP, got.UseRoute, got.Pod.DisableInitContainerInjection}
			if diff := cmp.Diff(want, gotFields); diff != "" {
				t.Errorf("OptionsFrom() (-want +got):\n%s", diff)
			}
		})
	}
}
