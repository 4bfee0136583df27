package v1alpha1

import (
	"reflect"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/diff"
)

func mapLookup(env map[string]string) LookupFunc {
	return func(key string) (string, bool) {
		v, ok := env[key]
		return v, ok
	}
}

func TestLoadKnobs(t *testing.T) {
	defaults := Knobs{
		RayClusterRequeue:                     300 * time.Second,
		GCSFTRedisCleanup:                     true,
		InitContainerInjection:                true,
		ProbesInjection:                       true,
		RayJobDeploymentStatusTransitionGrace: 300 * time.Second,
		RayJobStatusCheckTimeout:              300 * time.Second,
		ZeroDowntime:                          true,
		ClusterDomain:                         "cluster.local",
	}
	with := func(f func(*Knobs)) Knobs {
		k := defaults
		f(&k)
		return k
	}
	tests := map[string]struct {
		env          map[string]string
		want         Knobs
		wantWarnings int
	}{
		"empty environment gives KubeRay's defaults": {want: defaults},
		"off-by-default knobs turn on with true in any case": {
			env: map[string]string{
				EnvDeleteRayJobCRAfterJobFinishes: "TRUE",
				EnvEnableRayHeadClusterIPService:  "true",
				EnvEnableRandomPodDelete:          "True",
				EnvUseIngressOnOpenShift:          "true",
				EnvEnableLoginShell:               "true",
				EnvEnableWebhooks:                 "true",
				EnvEnableDeterministicHeadPodName: "TRUE",
			},
			want: with(func(k *Knobs) {
				k.DeleteRayJobCRAfterJobFinishes = true
				k.RayHeadClusterIPService = true
				k.RandomPodDelete = true
				k.IngressOnOpenShift = true
				k.LoginShell = true
				k.Webhooks = true
				k.DeterministicHeadPodName = true
			}),
		},
		"off-by-default knobs stay off for anything but true": {
			env: map[string]string{
				EnvDeleteRayJobCRAfterJobFinishes: "1",
				EnvEnableRandomPodDelete:          "yes",
			},
			want: defaults,
		},
		"on-by-default knobs turn off only with false": {
			env: map[string]string{
				EnvEnableGCSFTRedisCleanup:      "FALSE",
				EnvEnableInitContainerInjection: "false",
				EnvEnableProbesInjection:        "False",
				EnvEnableZeroDowntime:           "false",
			},
			want: with(func(k *Knobs) {
				k.GCSFTRedisCleanup = false
				k.InitContainerInjection = false
				k.ProbesInjection = false
				k.ZeroDowntime = false
			}),
		},
		"on-by-default knobs stay on for 0 or empty": {
			env:  map[string]string{EnvEnableGCSFTRedisCleanup: "0", EnvEnableProbesInjection: ""},
			want: defaults,
		},
		"seconds parse as integers": {
			env: map[string]string{
				EnvRayClusterDefaultRequeueSeconds:       "30",
				EnvRayJobDeploymentStatusTransitionGrace: "0",
			},
			want: with(func(k *Knobs) {
				k.RayClusterRequeue = 30 * time.Second
				k.RayJobDeploymentStatusTransitionGrace = 0
			}),
		},
		"unparsable seconds fall back to the default with a warning": {
			env: map[string]string{
				EnvRayClusterDefaultRequeueSeconds:       "5m",
				EnvRayJobDeploymentStatusTransitionGrace: "",
			},
			want:         defaults,
			wantWarnings: 2,
		},
		"status check timeout parses as integer seconds": {
			env:  map[string]string{EnvRayJobStatusCheckTimeout: "45"},
			want: with(func(k *Knobs) { k.RayJobStatusCheckTimeout = 45 * time.Second }),
		},
		"status check timeout that is not a positive integer falls back to 300 s with a warning": {
			env:          map[string]string{EnvRayJobStatusCheckTimeout: "0"},
			want:         defaults,
			wantWarnings: 1,
		},
		"negative status check timeout falls back with a warning": {
			env:          map[string]string{EnvRayJobStatusCheckTimeout: "-5"},
			want:         defaults,
			wantWarnings: 1,
		},
		"unparsable status check timeout falls back with one warning": {
			env:          map[string]string{EnvRayJobStatusCheckTimeout: "1m"},
			want:         defaults,
			wantWarnings: 1,
		},
		"cluster domain": {
			env:  map[string]string{EnvClusterDomain: "example.org"},
			want: with(func(k *Knobs) { k.ClusterDomain = "example.org" }),
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, warnings := LoadKnobs(mapLookup(tc.env))
			if !reflect.DeepEqual(tc.want, got) {
				t.Errorf("LoadKnobs() mismatch (-want +got):\n%s", diff.Diff(tc.want, got))
			}
			if len(warnings) != tc.wantWarnings {
				t.Errorf("LoadKnobs() warnings = %q, want %d", warnings, tc.wantWarnings)
			}
		})
	}
}

func TestDefaultKnobs(t *testing.T) {
	got := DefaultKnobs()
	if !got.GCSFTRedisCleanup || got.RayClusterRequeue != DefaultRayClusterRequeue || got.ClusterDomain != DefaultClusterDomain {
		t.Errorf("DefaultKnobs() = %+v, not KubeRay's defaults", got)
	}
}
