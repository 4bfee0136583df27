package e2eutil

import (
	"errors"
	"net/netip"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	localcluster "github.com/ray-operator/ray-operator/local/internal/cluster"
)

func TestSkipReason(t *testing.T) {
	const env = "E2EUTIL_TEST_ENABLE"
	cases := map[string]struct {
		opts  SuiteOptions
		short bool
		value string
		want  string
	}{
		"no enabling variable": {opts: SuiteOptions{}, want: ""},
		"-short":               {opts: SuiteOptions{EnableEnv: env}, short: true, value: "2.0.0", want: "-short"},
		"any value, unset": {
			opts: SuiteOptions{EnableEnv: env, MakeTarget: "test-x"},
			want: env + " unset: make test-x sets it",
		},
		"any value, set": {opts: SuiteOptions{EnableEnv: env}, value: "2.0.0", want: ""},
		"exact value, other": {
			opts:  SuiteOptions{EnableEnv: env, EnableValue: "true", MakeTarget: "test-y"},
			value: "yes",
			want:  env + " is not true: make test-y sets it",
		},
		"exact value, set": {opts: SuiteOptions{EnableEnv: env, EnableValue: "true"}, value: "true", want: ""},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Setenv(env, tc.value)
			if got := tc.opts.skipReason(tc.short); got != tc.want {
				t.Errorf("skipReason() = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestClusterOptions(t *testing.T) {
	t.Setenv(VenvEnv, "/venv")
	t.Setenv(RedisEnv, "/usr/bin/redis-server")
	cpu := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("12")}
	cases := map[string]struct {
		opts SuiteOptions
		want localcluster.Options
	}{
		"the package's options kept, CRDs and environment added": {
			opts: SuiteOptions{Cluster: localcluster.Options{Kueue: true, SyncFrequency: time.Second}},
			want: localcluster.Options{
				StateDir: "/state", CRDDirs: []string{"/repo/config/crd/bases"},
				RayVenvDir: "/venv", RedisServer: "/usr/bin/redis-server",
				Kueue: true, SyncFrequency: time.Second,
			},
		},
		"no CRDs, capacity chosen": {
			opts: SuiteOptions{NoCRDs: true, Capacity: func() (corev1.ResourceList, string, error) { return cpu, "12 CPUs", nil }},
			want: localcluster.Options{
				StateDir: "/state", RayVenvDir: "/venv", RedisServer: "/usr/bin/redis-server",
				Capacity: cpu, CapacityNote: "12 CPUs",
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := &Suite{opts: tc.opts, Root: "/repo", StateDir: "/state"}
			got, err := s.clusterOptions()
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got,
				cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 }),
				cmpopts.EquateComparable(netip.AddrPort{}),
				cmpopts.IgnoreFields(localcluster.Options{}, "Logger"),
			); diff != "" {
				t.Errorf("clusterOptions() (-want +got):\n%s", diff)
			}
		})
	}
}

func TestClusterOptionsCapacityError(t *testing.T) {
	want := errors.New("no /proc/meminfo")
	s := &Suite{opts: SuiteOptions{Capacity: func() (corev1.ResourceList, string, error) { return nil, "", want }}}
	if _, err := s.clusterOptions(); !errors.Is(err, want) {
		t.Errorf("clusterOptions() error = %v, want %v", err, want)
	}
}
