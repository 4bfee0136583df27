package operator

import (
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	configv1alpha1 "github.com/ray-operator/ray-operator/api/config/v1alpha1"
	"github.com/ray-operator/ray-operator/internal/features"
	"github.com/ray-operator/ray-operator/internal/webhooks"
)

func resolve(t *testing.T, args []string, env map[string]string) (Settings, error) {
	t.Helper()
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	flags := BindFlags(fs)
	if err := fs.Parse(args); err != nil {
		return Settings{}, err
	}
	return flags.Resolve(func(key string) (string, bool) {
		v, ok := env[key]
		return v, ok
	})
}

func writeConfig(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func defaulted(f func(*configv1alpha1.Configuration)) configv1alpha1.Configuration {
	var c configv1alpha1.Configuration
	configv1alpha1.SetDefaults(&c)
	f(&c)
	return c
}

func TestResolveConfiguration(t *testing.T) {
	file := writeConfig(t, `
apiVersion: config.ray.io/v1alpha1
kind: Configuration
metricsAddr: ":9000"
reconcileConcurrency: 5
featureGates:
  RayCronJob: true
`)
	tests := map[string]struct {
		args []string
		env  map[string]string
		want configv1alpha1.Configuration
	}{
		"no flags gives KubeRay's defaults": {
			want: defaulted(func(*configv1alpha1.Configuration) {}),
		},
		"every flag": {
			args: []string{
				"--metrics-addr=:1", "--health-probe-bind-address=127.0.0.1:2", "--enable-leader-election=false",
				"--leader-election-namespace=ops", "--reconcile-concurrency=4", "--watch-namespace=a,b",
				"--log-file-path=/tmp/op.log", "--log-file-encoder=console", "--log-stdout-encoder=console",
				"--batch-scheduler=yunikorn", "--use-kubernetes-proxy", "--enable-metrics", "--qps=20", "--burst=30",
				"--creation-events=per-pass",
			},
			want: defaulted(func(c *configv1alpha1.Configuration) {
				c.MetricsAddr, c.ProbeAddr = ":1", "127.0.0.1:2"
				c.EnableLeaderElection = new(false)
				c.LeaderElectionNamespace = "ops"
				c.ReconcileConcurrency = 4
				c.WatchNamespace = "a,b"
				c.LogFile, c.LogFileEncoder, c.LogStdoutEncoder = "/tmp/op.log", "console", "console"
				c.BatchScheduler = "yunikorn"
				c.UseKubernetesProxy, c.EnableMetrics = true, true
				c.QPS, c.Burst = new(float64(20)), new(30)
				c.CreationEvents = configv1alpha1.CreationEventsPerPass
			}),
		},
		"env knob sets deleteRayJobAfterJobFinishes": {
			env:  map[string]string{"DELETE_RAYJOB_CR_AFTER_JOB_FINISHES": "true"},
			want: defaulted(func(c *configv1alpha1.Configuration) { c.DeleteRayJobAfterJobFinishes = true }),
		},
		"config file replaces the other flags": {
			args: []string{"--config=" + file, "--metrics-addr=:7"},
			want: defaulted(func(c *configv1alpha1.Configuration) {
				c.APIVersion, c.Kind = "config.ray.io/v1alpha1", "Configuration"
				c.MetricsAddr = ":9000"
				c.ReconcileConcurrency = 5
				c.FeatureGates = map[string]bool{"RayCronJob": true}
			}),
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := resolve(t, tc.args, tc.env)
			if err != nil {
				t.Fatalf("Resolve() error = %v", err)
			}
			if diff := cmp.Diff(tc.want, got.Config); diff != "" {
				t.Errorf("Resolve() config mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestResolveFeatureGatesAndKnobs(t *testing.T) {
	file := writeConfig(t, "featureGates:\n  RayCronJob: true\n  RayJobDeletionPolicy: false\n")
	got, err := resolve(t, []string{"--config=" + file, "--feature-gates=RayCronJob=false"},
		map[string]string{"RAYCLUSTER_DEFAULT_REQUEUE_SECONDS_ENV": "10", "ENABLE_PROBES_INJECTION": "false"})
	if err != nil {
		t.Fatalf("Resolve() error = %v", err)
	}
	if got.Features.Enabled(features.RayCronJob) {
		t.Error("--feature-gates should override the file's featureGates")
	}
	if got.Features.Enabled(features.RayJobDeletionPolicy) {
		t.Error("the file's featureGates should apply")
	}
	if got.Knobs.RayClusterRequeue != 10*time.Second || got.Knobs.ProbesInjection {
		t.Errorf("knobs not read from the environment: %+v", got.Knobs)
	}
}

func TestResolveErrors(t *testing.T) {
	tests := map[string]struct {
		args    []string
		config  string
		wantErr string
	}{
		"unknown flag":            {args: []string{"--no-such-flag"}, wantErr: "no-such-flag"},
		"missing config file":     {args: []string{"--config=/nonexistent/config.yaml"}, wantErr: "reading --config"},
		"bad config file":         {config: "kind: Pod\n", wantErr: `kind "Pod"`},
		"invalid value from file": {config: "logStdoutEncoder: xml\n", wantErr: `logStdoutEncoder: "xml"`},
		"invalid flag value":      {args: []string{"--reconcile-concurrency=-2"}, wantErr: "reconcileConcurrency: must be at least 1"},
		"unknown feature gate":    {args: []string{"--feature-gates=Nope=true"}, wantErr: "--feature-gates"},
		"unknown scheduler":       {args: []string{"--batch-scheduler=slurm"}, wantErr: `"slurm" is not supported`},
		"both schedulers":         {args: []string{"--batch-scheduler=volcano", "--enable-batch-scheduler"}, wantErr: "use batchScheduler only"},
		"WAS excludes schedulers": {args: []string{"--feature-gates=KubernetesWAS=true", "--batch-scheduler=volcano"}, wantErr: "the KubernetesWAS feature gate cannot be combined with --batch-scheduler or --enable-batch-scheduler"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			args := tc.args
			if tc.config != "" {
				args = append(args, "--config="+writeConfig(t, tc.config))
			}
			_, err := resolve(t, args, nil)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("Resolve() error = %v, want it to contain %q", err, tc.wantErr)
			}
		})
	}
}

func TestResolveWarnings(t *testing.T) {
	file := writeConfig(t, "probeAddr: \":1\"\nfutureField: true\n")
	got, err := resolve(t, []string{"--config=" + file, "--forced-cluster-upgrade"},
		map[string]string{"RAYCLUSTER_DEFAULT_REQUEUE_SECONDS_ENV": "soon"})
	if err != nil {
		t.Fatalf("Resolve() error = %v", err)
	}
	if len(got.Warnings) != 3 {
		t.Errorf("Resolve() warnings = %q, want 3 (unknown field, deprecated flag, bad knob)", got.Warnings)
	}
}

func TestResolveWebhooks(t *testing.T) {
	on := map[string]string{"ENABLE_WEBHOOKS": "true", "POD_NAMESPACE": "ray-system"}
	tests := map[string]struct {
		args    []string
		env     map[string]string
		want    webhooks.Options
		wantErr string
	}{
		"off without ENABLE_WEBHOOKS": {want: webhooks.Defaults()},
		"ENABLE_WEBHOOKS with POD_NAMESPACE": {
			env: on,
			want: func() webhooks.Options {
				o := webhooks.Defaults()
				o.Enabled, o.Namespace = true, "ray-system"
				return o
			}(),
		},
		"every webhook flag": {
			args: []string{"--webhook-port=9000", "--webhook-host=127.0.0.1", "--webhook-cert-dir=/certs", "--webhook-cert-management=internal",
				"--webhook-namespace=ops", "--webhook-secret-name=s", "--webhook-service-name=svc", "--webhook-configuration-name=cfg",
				"--webhook-extra-dns-names=localhost,ray.local", "--webhook-write-cert-files"},
			env: on,
			want: webhooks.Options{Enabled: true, Port: 9000, Host: "127.0.0.1", CertDir: "/certs", CertManagement: webhooks.CertsInternal,
				Namespace: "ops", SecretName: "s", ServiceName: "svc", ConfigurationName: "cfg",
				ExtraDNSNames: []string{"localhost", "ray.local"}, WriteCertFiles: true},
		},
		"internal certificates need a namespace": {env: map[string]string{"ENABLE_WEBHOOKS": "true"}, wantErr: "POD_NAMESPACE"},
		"unknown certificate management":         {args: []string{"--webhook-cert-management=manual"}, env: on, wantErr: `"manual"`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := resolve(t, tc.args, tc.env)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one mentioning %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got.Webhooks); diff != "" {
				t.Errorf("webhook options (-want +got):\n%s", diff)
			}
		})
	}
}

// TestResolvePprof: --pprof-bind-address is off by default and applies with
// or without a --config file.
func TestResolvePprof(t *testing.T) {
	file := writeConfig(t, "reconcileConcurrency: 2\n")
	for name, tc := range map[string]struct {
		args []string
		want string
	}{
		"default off":   {nil, ""},
		"flag":          {[]string{"--pprof-bind-address=127.0.0.1:6060"}, "127.0.0.1:6060"},
		"with --config": {[]string{"--config=" + file, "--pprof-bind-address=:6060"}, ":6060"},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := resolve(t, tc.args, nil)
			if err != nil {
				t.Fatalf("Resolve() error = %v", err)
			}
			if got.PprofAddr != tc.want {
				t.Errorf("PprofAddr = %q, want %q", got.PprofAddr, tc.want)
			}
		})
	}
}
