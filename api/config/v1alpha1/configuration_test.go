package v1alpha1

import (
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/diff"
)

func TestSetDefaults(t *testing.T) {
	var got Configuration
	SetDefaults(&got)
	want := Configuration{
		MetricsAddr:          ":8080",
		ProbeAddr:            ":8082",
		EnableLeaderElection: new(true),
		LogFileEncoder:       "json",
		LogStdoutEncoder:     "json",
		QPS:                  new(float64(0)),
		Burst:                new(200),
		CreationEvents:       CreationEventsPerGroup,
		MTLSCertificates:     MTLSCertificatesCertManager,

		MTLSCertificateDuration:      &metav1.Duration{Duration: 2160 * time.Hour},
		RayServiceStatusPollInterval: &metav1.Duration{Duration: DefaultRayServiceStatusPollInterval},
	}
	if !reflect.DeepEqual(want, got) {
		t.Errorf("SetDefaults() mismatch (-want +got):\n%s", diff.Diff(want, got))
	}

	kept := Configuration{MetricsAddr: ":9000", EnableLeaderElection: new(false), ReconcileConcurrency: 4, QPS: new(float64(5))}
	SetDefaults(&kept)
	if kept.MetricsAddr != ":9000" || *kept.EnableLeaderElection || kept.ReconcileConcurrency != 4 || *kept.QPS != 5 {
		t.Errorf("SetDefaults() overwrote set fields: %+v", kept)
	}
}

func TestDecode(t *testing.T) {
	tests := map[string]struct {
		data         string
		want         Configuration
		wantErr      string
		wantWarnings int
	}{
		"KubeRay file": {
			data: `
apiVersion: config.ray.io/v1alpha1
kind: Configuration
metricsAddr: ":9090"
enableLeaderElection: false
reconcileConcurrency: 3
watchNamespace: a,b
batchScheduler: volcano
qps: 50.5
burst: 70
deleteRayJobAfterJobFinishes: true
headSidecarContainers:
- name: fluentbit
  image: fluent/fluent-bit:1.9
defaultContainerEnvs:
- name: FOO
  value: bar
featureGates:
  RayCronJob: true
`,
			want: Configuration{
				TypeMeta:                     metav1.TypeMeta{APIVersion: "config.ray.io/v1alpha1", Kind: "Configuration"},
				MetricsAddr:                  ":9090",
				EnableLeaderElection:         new(false),
				ReconcileConcurrency:         3,
				WatchNamespace:               "a,b",
				BatchScheduler:               "volcano",
				QPS:                          new(50.5),
				Burst:                        new(70),
				DeleteRayJobAfterJobFinishes: true,
				HeadSidecarContainers:        []corev1.Container{{Name: "fluentbit", Image: "fluent/fluent-bit:1.9"}},
				DefaultContainerEnvs:         []corev1.EnvVar{{Name: "FOO", Value: "bar"}},
				FeatureGates:                 map[string]bool{"RayCronJob": true},
			},
		},
		"no type meta": {data: `probeAddr: ":1"`, want: Configuration{ProbeAddr: ":1"}},
		"unknown field is a warning": {
			data:         "probeAddr: \":1\"\nsomeNewField: 3\n",
			want:         Configuration{ProbeAddr: ":1"},
			wantWarnings: 1,
		},
		"wrong apiVersion": {data: "apiVersion: ray.io/v1\nkind: Configuration\n", wantErr: `apiVersion "ray.io/v1"`},
		"wrong kind":       {data: "kind: RayCluster\n", wantErr: `kind "RayCluster"`},
		"wrong field type": {data: "reconcileConcurrency: many\n", wantErr: "decoding configuration"},
		"not yaml":         {data: "metricsAddr: [\n", wantErr: "decoding configuration"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, warnings, err := Decode([]byte(tc.data))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Decode() error = %v, want it to contain %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Decode() error = %v", err)
			}
			if !reflect.DeepEqual(tc.want, got) {
				t.Errorf("Decode() mismatch (-want +got):\n%s", diff.Diff(tc.want, got))
			}
			if len(warnings) != tc.wantWarnings {
				t.Errorf("Decode() warnings = %q, want %d", warnings, tc.wantWarnings)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	valid := func(f func(*Configuration)) *Configuration {
		var c Configuration
		SetDefaults(&c)
		f(&c)
		return &c
	}
	tests := map[string]struct {
		cfg           *Configuration
		kubernetesWAS bool
		wantErrs      []string
	}{
		"defaults":                          {cfg: valid(func(*Configuration) {})},
		"metrics off":                       {cfg: valid(func(c *Configuration) { c.MetricsAddr = "0" })},
		"host and port":                     {cfg: valid(func(c *Configuration) { c.ProbeAddr = "127.0.0.1:0" })},
		"every supported scheduler":         {cfg: valid(func(c *Configuration) { c.BatchScheduler = "kai-scheduler" })},
		"deprecated scheduler switch alone": {cfg: valid(func(c *Configuration) { c.EnableBatchScheduler = true })},
		"bad addresses": {
			cfg:      valid(func(c *Configuration) { c.MetricsAddr = "8080"; c.ProbeAddr = "" }),
			wantErrs: []string{`metricsAddr: "8080"`, `probeAddr: ""`},
		},
		"bad encoders": {
			cfg:      valid(func(c *Configuration) { c.LogFileEncoder = "text"; c.LogStdoutEncoder = "xml" }),
			wantErrs: []string{`logFileEncoder: "text"`, `logStdoutEncoder: "xml"`},
		},
		"bad concurrency and client limits": {
			cfg: valid(func(c *Configuration) {
				c.ReconcileConcurrency = -1
				c.QPS = new(float64(-1))
				c.Burst = new(-3)
			}),
			wantErrs: []string{"reconcileConcurrency: must be at least 1", "qps: must not be negative", "burst: must be positive"},
		},
		"bad namespaces": {
			cfg:      valid(func(c *Configuration) { c.WatchNamespace = "ok,Not_OK,"; c.LeaderElectionNamespace = "x y" }),
			wantErrs: []string{`watchNamespace: "Not_OK"`, `watchNamespace: ""`, `leaderElectionNamespace: "x y"`},
		},
		"creation events per pass": {cfg: valid(func(c *Configuration) { c.CreationEvents = CreationEventsPerPass })},
		"unknown creation events": {
			cfg:      valid(func(c *Configuration) { c.CreationEvents = "per-object" }),
			wantErrs: []string{`creationEvents: "per-object" is not "per-group" or "per-pass"`},
		},
		"operator-issued mTLS certificates, short-lived": {cfg: valid(func(c *Configuration) {
			c.MTLSCertificates = MTLSCertificatesOperator
			c.MTLSCertificateDuration = &metav1.Duration{Duration: time.Minute}
		})},
		"unknown mTLS certificates source, too short": {
			cfg: valid(func(c *Configuration) {
				c.MTLSCertificates = "vault"
				c.MTLSCertificateDuration = &metav1.Duration{Duration: 30 * time.Second}
			}),
			wantErrs: []string{`mtlsCertificates: "vault" is not "cert-manager" or "operator"`, "mtlsCertificateDuration: 30s is shorter than 1m0s"},
		},
		"unknown scheduler": {
			cfg:      valid(func(c *Configuration) { c.BatchScheduler = "slurm" }),
			wantErrs: []string{`batchScheduler: "slurm" is not supported`},
		},
		"both scheduler settings": {
			cfg:      valid(func(c *Configuration) { c.BatchScheduler = "volcano"; c.EnableBatchScheduler = true }),
			wantErrs: []string{"both enableBatchScheduler (deprecated) and batchScheduler"},
		},
		"WAS gate excludes batch scheduler": {
			cfg:           valid(func(c *Configuration) { c.BatchScheduler = "yunikorn" }),
			kubernetesWAS: true,
			wantErrs:      []string{"the KubernetesWAS feature gate cannot be combined with --batch-scheduler or --enable-batch-scheduler"},
		},
		"WAS gate excludes the deprecated switch": {
			cfg:           valid(func(c *Configuration) { c.EnableBatchScheduler = true }),
			kubernetesWAS: true,
			wantErrs:      []string{"the KubernetesWAS feature gate cannot be combined with --batch-scheduler or --enable-batch-scheduler"},
		},
		"WAS gate alone": {cfg: valid(func(*Configuration) {}), kubernetesWAS: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			err := Validate(tc.cfg, tc.kubernetesWAS)
			if len(tc.wantErrs) == 0 {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate() = nil, want errors %q", tc.wantErrs)
			}
			for _, want := range tc.wantErrs {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("Validate() = %v, want it to contain %q", err, want)
				}
			}
		})
	}
}

// TestConcurrency: unset, the RayJob controller gets its own, larger
// default; a value set applies to every controller, as in KubeRay.
func TestConcurrency(t *testing.T) {
	var unset Configuration
	SetDefaults(&unset)
	if got, want := unset.Concurrency(), DefaultReconcileConcurrency(); got != want {
		t.Errorf("unset: Concurrency() = %d, want %d", got, want)
	}
	if got, want := unset.RayJobConcurrency(), DefaultRayJobReconcileConcurrency(); got != want || got < 4*unset.Concurrency() {
		t.Errorf("unset: RayJobConcurrency() = %d, want %d (4x the others)", got, want)
	}
	set := Configuration{ReconcileConcurrency: 1}
	SetDefaults(&set)
	if set.Concurrency() != 1 || set.RayJobConcurrency() != 1 {
		t.Errorf("set to 1: Concurrency() = %d, RayJobConcurrency() = %d, want 1 and 1", set.Concurrency(), set.RayJobConcurrency())
	}
}
