package raypod

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// The tests in this file pin behaviours that KubeRay's own unit tests state
// as expected outputs; docs/dev/equivalence-audit.md lists them.

// TestStartParamDefaultsFacts: which `ray start` flags the operator fills in,
// and which user values it keeps, for heads and workers.
func TestStartParamDefaultsFacts(t *testing.T) {
	const fqdnAddr = "raycluster-head-svc.default.svc.cluster.local:6379"
	tests := map[string]struct {
		head   bool
		params map[string]string
		flag   string
		want   string // "" means the flag must be absent
	}{
		"head gets no address":                       {head: true, flag: "address", want: ""},
		"head keeps a user address":                  {head: true, params: map[string]string{"address": "custom:1234"}, flag: "address", want: "custom:1234"},
		"worker address is the head fqdn":            {flag: "address", want: fqdnAddr},
		"worker keeps a user address":                {params: map[string]string{"address": "custom:1234"}, flag: "address", want: "custom:1234"},
		"head metrics port defaults to 8080":         {head: true, flag: "metrics-export-port", want: "8080"},
		"worker keeps a custom metrics port":         {params: map[string]string{"metrics-export-port": "8081"}, flag: "metrics-export-port", want: "8081"},
		"block=false on the head is forced on":       {head: true, params: map[string]string{"block": "false"}, flag: "block", want: "true"},
		"block=false on a worker is forced on":       {params: map[string]string{"block": "false"}, flag: "block", want: "true"},
		"head dashboard host defaults to 0.0.0.0":    {head: true, flag: "dashboard-host", want: "0.0.0.0"},
		"head keeps dashboard host localhost":        {head: true, params: map[string]string{"dashboard-host": "localhost"}, flag: "dashboard-host", want: "localhost"},
		"worker gets no dashboard host":              {flag: "dashboard-host", want: ""},
		"worker keeps a user dashboard host":         {params: map[string]string{"dashboard-host": "localhost"}, flag: "dashboard-host", want: "localhost"},
		"agent listen port defaults to 52365":        {flag: "dashboard-agent-listen-port", want: "52365"},
		"head keeps a user agent listen port":        {head: true, params: map[string]string{"dashboard-agent-listen-port": "9999"}, flag: "dashboard-agent-listen-port", want: "9999"},
		"worker port param is passed through as-is":  {params: map[string]string{"port": "6379"}, flag: "port", want: "6379"},
		"worker sees no head-only no-monitor switch": {flag: "no-monitor", want: ""},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c := newCluster(func(c *rayv1.RayCluster) {
				if tc.head {
					c.Spec.HeadGroupSpec.RayStartParams = tc.params
				} else {
					c.Spec.WorkerGroupSpecs[0].RayStartParams = tc.params
				}
			})
			var pod *corev1.Pod
			if tc.head {
				pod = buildHead(t, c, Options{})
			} else {
				pod = buildWorker(t, c, WorkerIndex{}, Options{})
			}
			if diff := cmp.Diff(tc.want, flagValue(startCmd(pod), tc.flag)); diff != "" {
				t.Errorf("--%s in %q (-want +got):\n%s", tc.flag, startCmd(pod), diff)
			}
		})
	}
}

// flagValue finds --flag in a rendered command: its value, "true" for a
// switch, "" when absent.
func flagValue(cmd, flag string) string {
	for _, word := range strings.Fields(cmd) {
		if word == "--"+flag {
			return "true"
		}
		if v, ok := strings.CutPrefix(word, "--"+flag+"="); ok {
			return v
		}
	}
	return ""
}

// TestKubeRayWorkerCommandFact: a worker with 1 CPU, 1Gi and 3 GPUs as
// limits and port 6379 in its rayStartParams gets exactly this command.
func TestKubeRayWorkerCommandFact(t *testing.T) {
	c := newCluster(func(c *rayv1.RayCluster) {
		c.Name = "raycluster-sample"
		c.Spec.WorkerGroupSpecs[0].RayStartParams = map[string]string{"port": "6379"}
		workerContainer(c).Resources.Limits = corev1.ResourceList{
			corev1.ResourceCPU:    resource.MustParse("1"),
			corev1.ResourceMemory: resource.MustParse("1Gi"),
			"nvidia.com/gpu":      resource.MustParse("3"),
		}
	})
	pod := buildWorker(t, c, WorkerIndex{}, Options{})
	want := []string{"ulimit -n ${RAY_START_ULIMIT_OPEN_FILES:-65536}; ray start " +
		" --address=raycluster-sample-head-svc.default.svc.cluster.local:6379  --block " +
		" --dashboard-agent-listen-port=52365  --memory=1073741824  --metrics-export-port=8080 " +
		" --num-cpus=1  --num-gpus=3  --port=6379 "}
	if diff := cmp.Diff(want, pod.Spec.Containers[0].Args); diff != "" {
		t.Errorf("args (-want +got):\n%s", diff)
	}
	wantEnv := map[string]string{
		EnvRayAddress: "raycluster-sample-head-svc.default.svc.cluster.local:6379",
		EnvFQRayIP:    "raycluster-sample-head-svc.default.svc.cluster.local",
		EnvRayIP:      "raycluster-sample-head-svc",
	}
	gotEnv := map[string]string{}
	for name := range wantEnv {
		gotEnv[name] = env(pod.Spec.Containers[0])[name].Value
	}
	if diff := cmp.Diff(wantEnv, gotEnv); diff != "" {
		t.Errorf("env (-want +got):\n%s", diff)
	}
}

// TestLongClusterNameServiceAccountFact: the autoscaling head of a cluster
// with a 200-character name runs as the last 50 characters of that name.
func TestLongClusterNameServiceAccountFact(t *testing.T) {
	long := strings.Repeat("a", 150) + strings.Repeat("b", 50)
	c := newCluster(func(c *rayv1.RayCluster) {
		c.Name = long
		c.Spec.EnableInTreeAutoscaling = new(true)
	})
	if diff := cmp.Diff(strings.Repeat("b", 50), buildHead(t, c, Options{}).Spec.ServiceAccountName); diff != "" {
		t.Errorf("serviceAccountName (-want +got):\n%s", diff)
	}
}

// TestWaitGCSReadyCopiesRayContainerFact: the init container takes the Ray
// container's pull policy and environment, plus the head address.
func TestWaitGCSReadyCopiesRayContainerFact(t *testing.T) {
	for _, policy := range []corev1.PullPolicy{corev1.PullAlways, corev1.PullIfNotPresent, corev1.PullNever} {
		t.Run(string(policy), func(t *testing.T) {
			c := newCluster(func(c *rayv1.RayCluster) {
				workerContainer(c).ImagePullPolicy = policy
				workerContainer(c).Env = []corev1.EnvVar{{Name: "TEST_ENV_NAME", Value: "TEST_ENV_VALUE"}}
			})
			ic := buildWorker(t, c, WorkerIndex{}, Options{}).Spec.InitContainers[0]
			got := struct {
				Policy corev1.PullPolicy
				Env    []string
			}{ic.ImagePullPolicy, envNames(ic)}
			want := struct {
				Policy corev1.PullPolicy
				Env    []string
			}{policy, []string{"TEST_ENV_NAME", EnvFQRayIP, EnvRayIP}}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("wait-gcs-ready (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRayServiceWorkerProbesOnUnifiedHealthFact: on Ray 2.53+ a RayService
// worker's liveness uses the HTTP health endpoint, but its readiness stays an
// exec probe because it must also check the Serve proxy.
func TestRayServiceWorkerProbesOnUnifiedHealthFact(t *testing.T) {
	c := newCluster(func(c *rayv1.RayCluster) {
		c.Spec.RayVersion = "2.53.0"
		c.Labels = map[string]string{rayv1.LabelOriginatedFromCRD: "RayService"}
	})
	ray := buildWorker(t, c, WorkerIndex{}, Options{}).Spec.Containers[0]
	got := []*corev1.Probe{ray.LivenessProbe, ray.ReadinessProbe}
	want := []*corev1.Probe{
		httpProbe(30, 2, 120),
		wgetProbe(10, 2, 1, rayletCheck+" && wget --tries 1 -T 10 -q -O- http://localhost:8000/-/healthz | grep success"),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("liveness, readiness (-want +got):\n%s", diff)
	}
}
