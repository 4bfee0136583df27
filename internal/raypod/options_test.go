package raypod

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

func TestTokenAuth(t *testing.T) {
	secretEnv := func(name string) corev1.EnvVar {
		return corev1.EnvVar{Name: EnvAuthToken, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: "auth_token",
		}}}
	}
	tests := map[string]struct {
		auth       *rayv1.AuthOptions
		wantEnv    []corev1.EnvVar
		wantVolume bool
	}{
		"disabled": {auth: &rayv1.AuthOptions{Mode: rayv1.AuthModeDisabled}},
		"token from generated secret": {
			auth:    &rayv1.AuthOptions{Mode: rayv1.AuthModeToken},
			wantEnv: []corev1.EnvVar{{Name: EnvAuthMode, Value: "token"}, secretEnv("raycluster")},
		},
		"token from user secret": {
			auth:    &rayv1.AuthOptions{Mode: rayv1.AuthModeToken, SecretName: new("mine")},
			wantEnv: []corev1.EnvVar{{Name: EnvAuthMode, Value: "token"}, secretEnv("mine")},
		},
		"kubernetes token auth": {
			auth:       &rayv1.AuthOptions{Mode: rayv1.AuthModeToken, EnableK8sTokenAuth: new(true)},
			wantEnv:    []corev1.EnvVar{{Name: EnvAuthMode, Value: "token"}, {Name: EnvEnableK8sTokenAuth, Value: "true"}},
			wantVolume: true,
		},
	}
	authNames := map[string]bool{EnvAuthMode: true, EnvAuthToken: true, EnvEnableK8sTokenAuth: true}
	authEnv := func(c corev1.Container) []corev1.EnvVar {
		var out []corev1.EnvVar
		for _, e := range c.Env {
			if authNames[e.Name] {
				out = append(out, e)
			}
		}
		return out
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c := newCluster(func(c *rayv1.RayCluster) {
				c.Spec.AuthOptions = tc.auth
				c.Spec.EnableInTreeAutoscaling = new(true)
			})
			head := buildHead(t, c, Options{})
			worker := buildWorker(t, c, WorkerIndex{}, Options{})
			containers := map[string]corev1.Container{
				"head":           head.Spec.Containers[0],
				"autoscaler":     head.Spec.Containers[1],
				"worker":         worker.Spec.Containers[0],
				"wait-gcs-ready": worker.Spec.InitContainers[0],
			}
			for cname, ctr := range containers {
				if diff := cmp.Diff(tc.wantEnv, authEnv(ctr)); diff != "" {
					t.Errorf("%s auth env (-want +got):\n%s", cname, diff)
				}
			}
			hasVolume := false
			for _, v := range worker.Spec.Volumes {
				hasVolume = hasVolume || v.Name == RayTokenVolumeName
			}
			if hasVolume != tc.wantVolume {
				t.Errorf("token volume present = %v, want %v", hasVolume, tc.wantVolume)
			}
		})
	}
}

func TestSharedMemoryVolume(t *testing.T) {
	oneGi := resource.MustParse("1Gi")
	tests := map[string]struct {
		mutate      func(*rayv1.RayCluster)
		wantVolumes []corev1.Volume
		wantMounts  []corev1.VolumeMount
	}{
		"size from memory request": {
			mutate: func(c *rayv1.RayCluster) {
				workerContainer(c).Resources.Requests = corev1.ResourceList{corev1.ResourceMemory: oneGi}
			},
			wantVolumes: []corev1.Volume{{Name: "shared-mem", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory, SizeLimit: &oneGi}}}},
			wantMounts:  []corev1.VolumeMount{{Name: "shared-mem", MountPath: "/dev/shm"}},
		},
		"plasma-directory skips it": {
			mutate: func(c *rayv1.RayCluster) {
				c.Spec.WorkerGroupSpecs[0].RayStartParams = map[string]string{"plasma-directory": "/data"}
			},
		},
		"user mount at /dev/shm wins": {
			mutate: func(c *rayv1.RayCluster) {
				workerContainer(c).VolumeMounts = []corev1.VolumeMount{{Name: "mine", MountPath: "/dev/shm"}}
				c.Spec.WorkerGroupSpecs[0].Template.Spec.Volumes = []corev1.Volume{{Name: "mine"}}
			},
			wantVolumes: []corev1.Volume{{Name: "mine"}},
			wantMounts:  []corev1.VolumeMount{{Name: "mine", MountPath: "/dev/shm"}},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			pod := buildWorker(t, newCluster(tc.mutate), WorkerIndex{}, Options{})
			if diff := cmp.Diff(tc.wantVolumes, pod.Spec.Volumes); diff != "" {
				t.Errorf("volumes (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantMounts, pod.Spec.Containers[0].VolumeMounts); diff != "" {
				t.Errorf("mounts (-want +got):\n%s", diff)
			}
		})
	}
}

type recordingScheduler struct{ groups []string }

func (r *recordingScheduler) MutatePod(_ *rayv1.RayCluster, pod *corev1.Pod, group string) {
	r.groups = append(r.groups, group)
	pod.Spec.SchedulerName = "volcano"
}

func TestOperatorOptions(t *testing.T) {
	sidecar := corev1.Container{Name: "fluentbit", Image: "fluent-bit"}
	sched := &recordingScheduler{}
	opts := Options{
		DeterministicHeadPodName:      true,
		DisableInitContainerInjection: true,
		HeadSidecarContainers:         []corev1.Container{sidecar},
		WorkerSidecarContainers:       []corev1.Container{sidecar},
		DefaultContainerEnvs:          []corev1.EnvVar{{Name: "RAY_ADDRESS", Value: "ignored"}, {Name: "HTTP_PROXY", Value: "proxy"}},
		BatchScheduler:                sched,
		OperatorVersion:               "v1.5.0",
	}
	c := newCluster(func(c *rayv1.RayCluster) {
		headContainer(c).Env = []corev1.EnvVar{{Name: "RAY_ADDRESS", Value: "mine"}}
	})
	head := buildHead(t, c, opts)
	worker := buildWorker(t, c, WorkerIndex{}, opts)

	got := map[string]any{
		"head name":          head.Name,
		"head generateName":  head.GenerateName,
		"head containers":    []string{head.Spec.Containers[0].Name, head.Spec.Containers[1].Name},
		"worker containers":  []string{worker.Spec.Containers[0].Name, worker.Spec.Containers[1].Name},
		"worker init":        len(worker.Spec.InitContainers),
		"head RAY_ADDRESS":   env(head.Spec.Containers[0])[EnvRayAddress].Value,
		"head HTTP_PROXY":    env(head.Spec.Containers[0])["HTTP_PROXY"].Value,
		"worker RAY_ADDRESS": env(worker.Spec.Containers[0])[EnvRayAddress].Value,
		"usage tags":         env(head.Spec.Containers[0])[EnvUsageStatsExtraTags].Value,
		"scheduler groups":   sched.groups,
		"scheduler name":     worker.Spec.SchedulerName,
	}
	want := map[string]any{
		"head name":          "raycluster-head",
		"head generateName":  "",
		"head containers":    []string{"ray-head", "fluentbit"},
		"worker containers":  []string{"ray-worker", "fluentbit"},
		"worker init":        0,
		"head RAY_ADDRESS":   "mine",
		"head HTTP_PROXY":    "proxy",
		"worker RAY_ADDRESS": "ignored",
		"usage tags":         "kuberay_version=v1.5.0;kuberay_crd=RayCluster",
		"scheduler groups":   []string{"headgroup", "small"},
		"scheduler name":     "volcano",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if names := envNames(head.Spec.Containers[0]); names[0] != "RAY_ADDRESS" || names[1] != "HTTP_PROXY" {
		t.Errorf("user and default env come first, got %v", names)
	}
}

func TestBuildErrors(t *testing.T) {
	noContainers := newCluster(func(c *rayv1.RayCluster) {
		c.Spec.HeadGroupSpec.Template.Spec.Containers = nil
		c.Spec.WorkerGroupSpecs[0].Template.Spec.Containers = nil
	})
	if _, err := BuildHeadPod(noContainers, Options{}); err == nil {
		t.Error("head without containers: want error")
	}
	if _, err := BuildWorkerPod(noContainers, 0, WorkerIndex{}, Options{}); err == nil {
		t.Error("worker without containers: want error")
	}
	if _, err := BuildWorkerPod(newCluster(), 3, WorkerIndex{}, Options{}); err == nil {
		t.Error("group index out of range: want error")
	}
}
