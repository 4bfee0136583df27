package raypod

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/buildinfo"
)

func TestPodLabelsAndAnnotations(t *testing.T) {
	c := newCluster(func(c *rayv1.RayCluster) {
		c.Annotations = map[string]string{rayv1.AnnotationOverwriteContainerCmd: "true"}
		c.Spec.HeadGroupSpec.Template.Labels = map[string]string{
			"team": "ml", "ray.io/cluster": "spoof", "ray.io/node-type": "spoof", "ray.io/group": "spoof",
			"ray.io/identifier": "custom-id", "zone": "template",
		}
		c.Spec.HeadGroupSpec.Template.Annotations = map[string]string{"a": "1"}
		c.Spec.HeadGroupSpec.Labels = map[string]string{"zone": "group"}
	})
	pod := buildHead(t, c, Options{DefaultPodLabels: map[string]string{"team": "default", "env": "prod"}, DefaultPodAnnotations: map[string]string{"a": "x", "b": "2"}})
	wantLabels := map[string]string{
		"app.kubernetes.io/created-by": "kuberay-operator",
		"app.kubernetes.io/name":       "kuberay",
		"ray.io/cluster":               "raycluster",
		"ray.io/group":                 "headgroup",
		"ray.io/identifier":            "custom-id",
		"ray.io/is-ray-node":           "yes",
		"ray.io/node-type":             "head",
		"team":                         "ml",
		"zone":                         "group",
		"env":                          "prod",
	}
	if diff := cmp.Diff(wantLabels, pod.Labels); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
	wantAnnotations := map[string]string{"a": "1", "b": "2", "ray.io/overwrite-container-cmd": "true", "ray.io/ft-enabled": "false"}
	if diff := cmp.Diff(wantAnnotations, pod.Annotations); diff != "" {
		t.Errorf("annotations (-want +got):\n%s", diff)
	}
}

func TestRayServiceCreatedPods(t *testing.T) {
	c := newCluster(func(c *rayv1.RayCluster) {
		c.Labels = map[string]string{rayv1.LabelOriginatedFromCRD: "RayService"}
		workerContainer(c).Ports = []corev1.ContainerPort{{Name: "serve", ContainerPort: 9000}}
	})
	head := buildHead(t, c, Options{})
	worker := buildWorker(t, c, WorkerIndex{}, Options{})
	if diff := cmp.Diff([]string{"false", "true"}, []string{head.Labels[rayv1.LabelServe], worker.Labels[rayv1.LabelServe]}); diff != "" {
		t.Errorf("ray.io/serve head, worker (-want +got):\n%s", diff)
	}
	e := env(worker.Spec.Containers[0])
	got := []string{e[EnvTaskWaitForDeathInfoMs].Value, e[EnvGcsServerRequestTimeoutS].Value, e[EnvServeKVTimeoutS].Value}
	if diff := cmp.Diff([]string{"0", "5", "5"}, got); diff != "" {
		t.Errorf("RayService env (-want +got):\n%s", diff)
	}
	wantReadiness := wgetProbe(10, 2, 1, rayletCheck+" && wget --tries 1 -T 10 -q -O- http://localhost:9000/-/healthz | grep success")
	if diff := cmp.Diff(wantReadiness, worker.Spec.Containers[0].ReadinessProbe); diff != "" {
		t.Errorf("worker readiness (-want +got):\n%s", diff)
	}
	if tags := env(head.Spec.Containers[0])[EnvUsageStatsExtraTags].Value; tags != "kuberay_version="+buildinfo.Version()+";kuberay_crd=RayService" {
		t.Errorf("usage tags = %q", tags)
	}
}

func TestWorkerIndexLabels(t *testing.T) {
	idx := WorkerIndex{ReplicaIndex: 2, ReplicaName: "small-abcde", HostIndex: 1}
	keys := []string{rayv1.LabelWorkerReplicaIndex, rayv1.LabelWorkerReplicaName, rayv1.LabelReplicaHostIndex}
	tests := map[string]struct {
		numOfHosts int32
		opts       Options
		want       map[string]string
	}{
		"gate off":             {numOfHosts: 4, want: map[string]string{}},
		"single host":          {numOfHosts: 1, opts: Options{MultiHostIndexing: true}, want: map[string]string{rayv1.LabelWorkerReplicaIndex: "2"}},
		"multi host all three": {numOfHosts: 4, opts: Options{MultiHostIndexing: true}, want: map[string]string{rayv1.LabelWorkerReplicaIndex: "2", rayv1.LabelWorkerReplicaName: "small-abcde", rayv1.LabelReplicaHostIndex: "1"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c := newCluster(func(c *rayv1.RayCluster) { c.Spec.WorkerGroupSpecs[0].NumOfHosts = tc.numOfHosts })
			pod := buildWorker(t, c, idx, tc.opts)
			got := map[string]string{}
			for _, k := range keys {
				if v, ok := pod.Labels[k]; ok {
					got[k] = v
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("index labels (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAutoscaler(t *testing.T) {
	tests := map[string]struct {
		version           *rayv1.AutoscalerVersion
		wantEnv           []corev1.EnvVar
		wantRestartPolicy corev1.RestartPolicy
	}{
		"version unset: Ray decides": {},
		"v1": {
			version: new(rayv1.AutoscalerVersionV1),
			wantEnv: []corev1.EnvVar{{Name: EnvEnableAutoscalerV2, Value: "false"}},
		},
		"v2": {
			version:           new(rayv1.AutoscalerVersionV2),
			wantEnv:           []corev1.EnvVar{{Name: EnvEnableAutoscalerV2, Value: "true"}},
			wantRestartPolicy: corev1.RestartPolicyNever,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c := newCluster(func(c *rayv1.RayCluster) {
				c.Spec.EnableInTreeAutoscaling = new(true)
				c.Spec.AutoscalerOptions = &rayv1.AutoscalerOptions{Version: tc.version}
			})
			head := buildHead(t, c, Options{})
			worker := buildWorker(t, c, WorkerIndex{}, Options{})
			var gotEnv []corev1.EnvVar
			for _, e := range head.Spec.Containers[0].Env {
				if e.Name == EnvEnableAutoscalerV2 {
					gotEnv = append(gotEnv, e)
				}
			}
			if diff := cmp.Diff(tc.wantEnv, gotEnv); diff != "" {
				t.Errorf("RAY_enable_autoscaler_v2 (-want +got):\n%s", diff)
			}
			got := []corev1.RestartPolicy{head.Spec.RestartPolicy, worker.Spec.RestartPolicy}
			if diff := cmp.Diff([]corev1.RestartPolicy{tc.wantRestartPolicy, tc.wantRestartPolicy}, got); diff != "" {
				t.Errorf("restart policy head, worker (-want +got):\n%s", diff)
			}
			if head.Spec.ServiceAccountName != "raycluster" {
				t.Errorf("serviceAccountName = %q", head.Spec.ServiceAccountName)
			}
			if names := []string{head.Spec.Containers[0].Name, head.Spec.Containers[1].Name}; names[1] != AutoscalerContainerName {
				t.Errorf("containers = %v", names)
			}
		})
	}
}

func TestAutoscalerOptionsOverride(t *testing.T) {
	res := corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}
	c := newCluster(func(c *rayv1.RayCluster) {
		c.Spec.EnableInTreeAutoscaling = new(true)
		c.Spec.AutoscalerOptions = &rayv1.AutoscalerOptions{
			Image:           new("autoscaler:dev"),
			ImagePullPolicy: new(corev1.PullAlways),
			Resources:       &res,
			SecurityContext: &corev1.SecurityContext{RunAsNonRoot: new(true)},
			Env:             []corev1.EnvVar{{Name: "X", Value: "1"}},
			EnvFrom:         []corev1.EnvFromSource{{Prefix: "P_"}},
			VolumeMounts:    []corev1.VolumeMount{{Name: "tls", MountPath: "/tls"}},
			Command:         []string{"python"},
			Args:            []string{"-m", "autoscaler"},
		}
	})
	got := buildHead(t, c, Options{}).Spec.Containers[1]
	want := corev1.Container{
		Name:            AutoscalerContainerName,
		Image:           "autoscaler:dev",
		ImagePullPolicy: corev1.PullAlways,
		Command:         []string{"python"},
		Args:            []string{"-m", "autoscaler"},
		Env: []corev1.EnvVar{
			fieldRefEnv("RAY_CLUSTER_NAME", "metadata.labels['ray.io/cluster']"),
			fieldRefEnv("RAY_CLUSTER_NAMESPACE", "metadata.namespace"),
			fieldRefEnv("RAY_HEAD_POD_NAME", "metadata.name"),
			{Name: "KUBERAY_CRD_VER", Value: "v1"},
			{Name: "KUBERAY_GEN_AUTOSCALER_START_CMD", Value: autoscalerStartCmd},
			{Name: "X", Value: "1"},
		},
		EnvFrom:         []corev1.EnvFromSource{{Prefix: "P_"}},
		Resources:       res,
		SecurityContext: &corev1.SecurityContext{RunAsNonRoot: new(true)},
		VolumeMounts:    []corev1.VolumeMount{{Name: "tls", MountPath: "/tls"}, {Name: RayLogsVolumeName, MountPath: RayLogsMountPath}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("autoscaler container (-want +got):\n%s", diff)
	}
}

func TestGCSFaultTolerance(t *testing.T) {
	secretRef := &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "redis"}, Key: "pw"}}
	tests := map[string]struct {
		mutate          func(*rayv1.RayCluster)
		wantAnnotations map[string]string
		wantHeadEnv     []corev1.EnvVar
		wantStart       string
	}{
		"off": {
			mutate:          func(*rayv1.RayCluster) {},
			wantAnnotations: map[string]string{rayv1.AnnotationFTEnabled: "false"},
		},
		"legacy annotation with inline password": {
			mutate: func(c *rayv1.RayCluster) {
				c.Annotations = map[string]string{rayv1.AnnotationFTEnabled: "true", rayv1.AnnotationExternalStorageNamespace: "ns-1"}
				c.Spec.HeadGroupSpec.RayStartParams = map[string]string{"redis-password": "secret"}
			},
			wantAnnotations: map[string]string{rayv1.AnnotationFTEnabled: "true", rayv1.AnnotationExternalStorageNamespace: "ns-1"},
			wantHeadEnv: []corev1.EnvVar{
				{Name: EnvExternalStorageNamespace, Value: "ns-1"},
				{Name: EnvRedisPassword, Value: "secret"},
			},
			wantStart: "--redis-password=secret",
		},
		"options with credentials": {
			mutate: func(c *rayv1.RayCluster) {
				c.Annotations = map[string]string{rayv1.AnnotationExternalStorageNamespace: "ignored"}
				c.Spec.GcsFaultToleranceOptions = &rayv1.GcsFaultToleranceOptions{
					RedisAddress:             "redis:6379",
					RedisUsername:            &rayv1.RedisCredential{Value: "user"},
					RedisPassword:            &rayv1.RedisCredential{ValueFrom: secretRef},
					ExternalStorageNamespace: "from-options",
				}
			},
			wantAnnotations: map[string]string{rayv1.AnnotationFTEnabled: "true", rayv1.AnnotationExternalStorageNamespace: "from-options"},
			wantHeadEnv: []corev1.EnvVar{
				{Name: EnvExternalStorageNamespace, Value: "from-options"},
				{Name: EnvRedisAddress, Value: "redis:6379"},
				{Name: EnvRedisUsername, Value: "user"},
				{Name: EnvRedisPassword, ValueFrom: secretRef},
			},
			wantStart: "--redis-password=$REDIS_PASSWORD  --redis-username=$REDIS_USERNAME",
		},
		"options default namespace is the uid": {
			mutate: func(c *rayv1.RayCluster) {
				c.Spec.GcsFaultToleranceOptions = &rayv1.GcsFaultToleranceOptions{RedisAddress: "redis:6379"}
			},
			wantAnnotations: map[string]string{rayv1.AnnotationFTEnabled: "true", rayv1.AnnotationExternalStorageNamespace: "uid-1"},
			wantHeadEnv: []corev1.EnvVar{
				{Name: EnvExternalStorageNamespace, Value: "uid-1"},
				{Name: EnvRedisAddress, Value: "redis:6379"},
			},
		},
		// KubeRay wires the storage namespace only for Redis; the embedded
		// backend has none.
		"embedded rocksdb: no storage namespace, no Redis env": {
			mutate: func(c *rayv1.RayCluster) {
				c.Annotations = map[string]string{rayv1.AnnotationExternalStorageNamespace: "ignored"}
				c.Spec.GcsFaultToleranceOptions = &rayv1.GcsFaultToleranceOptions{Backend: rayv1.GcsFTBackendRocksDB}
			},
			wantAnnotations: map[string]string{rayv1.AnnotationFTEnabled: "true"},
		},
	}
	ftNames := map[string]bool{EnvExternalStorageNamespace: true, EnvRedisAddress: true, EnvRedisUsername: true, EnvRedisPassword: true}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c := newCluster(tc.mutate)
			head := buildHead(t, c, Options{})
			if diff := cmp.Diff(tc.wantAnnotations, head.Annotations); diff != "" {
				t.Errorf("annotations (-want +got):\n%s", diff)
			}
			var gotEnv []corev1.EnvVar
			for _, e := range head.Spec.Containers[0].Env {
				if ftNames[e.Name] {
					gotEnv = append(gotEnv, e)
				}
			}
			if diff := cmp.Diff(tc.wantHeadEnv, gotEnv); diff != "" {
				t.Errorf("head FT env (-want +got):\n%s", diff)
			}
			if tc.wantStart != "" && !strings.Contains(startCmd(head), tc.wantStart) {
				t.Errorf("ray start %q lacks %q", startCmd(head), tc.wantStart)
			}
			worker := buildWorker(t, c, WorkerIndex{}, Options{})
			wantTimeout := ""
			if tc.wantAnnotations[rayv1.AnnotationFTEnabled] == "true" {
				wantTimeout = "600"
			}
			if got := env(worker.Spec.Containers[0])[EnvGcsReconnectTimeoutS].Value; got != wantTimeout {
				t.Errorf("worker %s = %q, want %q", EnvGcsReconnectTimeoutS, got, wantTimeout)
			}
		})
	}
}

func TestProbes(t *testing.T) {
	userProbe := &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(1)}}}
	tests := map[string]struct {
		mutate        func(*rayv1.RayCluster)
		opts          Options
		wantLiveness  *corev1.Probe
		wantReadiness *corev1.Probe
	}{
		"injection disabled": {mutate: func(*rayv1.RayCluster) {}, opts: Options{DisableProbesInjection: true}},
		"user probes kept": {
			mutate: func(c *rayv1.RayCluster) {
				headContainer(c).LivenessProbe, headContainer(c).ReadinessProbe = userProbe, userProbe
			},
			wantLiveness:  userProbe,
			wantReadiness: userProbe,
		},
		"custom ports from rayStartParams": {
			mutate: func(c *rayv1.RayCluster) {
				c.Spec.HeadGroupSpec.RayStartParams = map[string]string{"dashboard-port": "8266", "dashboard-agent-listen-port": "8267"}
			},
			wantLiveness:  wgetProbe(30, 5, 120, "wget --tries 1 -T 2 -q -O- http://localhost:8267/api/local_raylet_healthz | grep success && wget --tries 1 -T 10 -q -O- http://localhost:8266/api/gcs_healthz | grep success"),
			wantReadiness: wgetProbe(10, 5, 10, "wget --tries 1 -T 2 -q -O- http://localhost:8267/api/local_raylet_healthz | grep success && wget --tries 1 -T 10 -q -O- http://localhost:8266/api/gcs_healthz | grep success"),
		},
		"ray 2.53 uses the unified http endpoint": {
			mutate:        func(c *rayv1.RayCluster) { c.Spec.RayVersion = "2.53.0" },
			wantLiveness:  httpProbe(30, 5, 120),
			wantReadiness: httpProbe(10, 5, 10),
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ray := buildHead(t, newCluster(tc.mutate), tc.opts).Spec.Containers[0]
			if diff := cmp.Diff(tc.wantLiveness, ray.LivenessProbe); diff != "" {
				t.Errorf("liveness (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantReadiness, ray.ReadinessProbe); diff != "" {
				t.Errorf("readiness (-want +got):\n%s", diff)
			}
		})
	}
}

func httpProbe(initialDelay, timeout, failure int32) *corev1.Probe {
	return &corev1.Probe{
		ProbeHandler:        corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/api/healthz", Port: intstr.FromInt32(52365)}},
		InitialDelaySeconds: initialDelay, TimeoutSeconds: timeout, PeriodSeconds: 5, SuccessThreshold: 1, FailureThreshold: failure,
	}
}
