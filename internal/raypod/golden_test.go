package raypod

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/ray-operator/ray-operator/internal/buildinfo"
)

func ownerRefs() []metav1.OwnerReference {
	return []metav1.OwnerReference{{
		APIVersion: "ray.io/v1", Kind: "RayCluster", Name: "raycluster", UID: "uid-1",
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
	}}
}

func fieldRefEnv(name, path string) corev1.EnvVar {
	return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: path}}}
}

func wgetProbe(initialDelay, timeout, failure int32, cmd string) *corev1.Probe {
	return &corev1.Probe{
		ProbeHandler:        corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"bash", "-c", cmd}}},
		InitialDelaySeconds: initialDelay, TimeoutSeconds: timeout, PeriodSeconds: 5,
		SuccessThreshold: 1, FailureThreshold: failure,
	}
}

const (
	rayletCheck = "wget --tries 1 -T 2 -q -O- http://localhost:52365/api/local_raylet_healthz | grep success"
	gcsCheck    = "wget --tries 1 -T 10 -q -O- http://localhost:8265/api/gcs_healthz | grep success"
	headFQDN    = "raycluster-head-svc.default.svc.cluster.local"
)

// TestBuildHeadPodGolden pins every field of a plain head Pod.
func TestBuildHeadPodGolden(t *testing.T) {
	start := "ray start --head  --block  --dashboard-agent-listen-port=52365  --dashboard-host=0.0.0.0  --memory=2000000000  --metrics-export-port=8080  --num-cpus=1 "
	mem := resource.MustParse("2G")
	want := &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			GenerateName: "raycluster-head-",
			Namespace:    "default",
			Labels: map[string]string{
				"app.kubernetes.io/created-by": "kuberay-operator",
				"app.kubernetes.io/name":       "kuberay",
				"ray.io/cluster":               "raycluster",
				"ray.io/group":                 "headgroup",
				"ray.io/identifier":            "raycluster-head",
				"ray.io/is-ray-node":           "yes",
				"ray.io/node-type":             "head",
			},
			Annotations:     map[string]string{"ray.io/ft-enabled": "false"},
			OwnerReferences: ownerRefs(),
		},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{
				Name:    "ray-head",
				Image:   "rayproject/ray:2.46.0",
				Command: []string{"/bin/bash", "-c", "--"},
				Args:    []string{"ulimit -n ${RAY_START_ULIMIT_OPEN_FILES:-65536}; " + start},
				Ports:   []corev1.ContainerPort{{Name: "metrics", ContainerPort: 8080}},
				Env: []corev1.EnvVar{
					fieldRefEnv("RAY_CLUSTER_NAME", "metadata.labels['ray.io/cluster']"),
					fieldRefEnv("RAY_CLUSTER_NAMESPACE", "metadata.namespace"),
					fieldRefEnv("RAY_CLOUD_INSTANCE_ID", "metadata.name"),
					fieldRefEnv("RAY_NODE_TYPE_NAME", "metadata.labels['ray.io/group']"),
					{Name: "KUBERAY_GEN_RAY_START_CMD", Value: start},
					{Name: "RAY_PORT", Value: "6379"},
					{Name: "RAY_ADDRESS", Value: "127.0.0.1:6379"},
					{Name: "RAY_USAGE_STATS_KUBERAY_IN_USE", Value: "1"},
					{Name: "RAY_USAGE_STATS_EXTRA_TAGS", Value: "kuberay_version=" + buildinfo.Version() + ";kuberay_crd=RayCluster"},
					{Name: "RAY_DASHBOARD_ENABLE_K8S_DISK_USAGE", Value: "1"},
				},
				Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{
					corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: mem,
				}},
				VolumeMounts:   []corev1.VolumeMount{{Name: "shared-mem", MountPath: "/dev/shm"}},
				LivenessProbe:  wgetProbe(30, 5, 120, rayletCheck+" && "+gcsCheck),
				ReadinessProbe: wgetProbe(10, 5, 10, rayletCheck+" && "+gcsCheck),
			}},
			Volumes: []corev1.Volume{{Name: "shared-mem", VolumeSource: corev1.VolumeSource{
				EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory, SizeLimit: &mem},
			}}},
		},
	}
	got := buildHead(t, newCluster(), Options{})
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("head Pod (-want +got):\n%s", diff)
	}
}

// TestBuildWorkerPodGolden pins every field of a plain worker Pod.
func TestBuildWorkerPodGolden(t *testing.T) {
	start := "ray start  --address=" + headFQDN + ":6379  --block  --dashboard-agent-listen-port=52365  --metrics-export-port=8080 "
	small := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("200m"), corev1.ResourceMemory: resource.MustParse("256Mi")}
	addressEnv := []corev1.EnvVar{{Name: "FQ_RAY_IP", Value: headFQDN}, {Name: "RAY_IP", Value: "raycluster-head-svc"}}
	want := &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			GenerateName: "raycluster-small-worker-",
			Namespace:    "default",
			Labels: map[string]string{
				"app.kubernetes.io/created-by": "kuberay-operator",
				"app.kubernetes.io/name":       "kuberay",
				"ray.io/cluster":               "raycluster",
				"ray.io/group":                 "small",
				"ray.io/identifier":            "raycluster-worker",
				"ray.io/is-ray-node":           "yes",
				"ray.io/node-type":             "worker",
			},
			Annotations:     map[string]string{},
			OwnerReferences: ownerRefs(),
		},
		Spec: corev1.PodSpec{
			InitContainers: []corev1.Container{{
				Name:      "wait-gcs-ready",
				Image:     "rayproject/ray:2.46.0",
				Command:   []string{"/bin/bash", "-c", "--"},
				Args:      []string{fmt.Sprintf(waitGCSReadyScript, headFQDN, "6379")},
				Env:       addressEnv,
				Resources: corev1.ResourceRequirements{Limits: small, Requests: small},
			}},
			Containers: []corev1.Container{{
				Name:    "ray-worker",
				Image:   "rayproject/ray:2.46.0",
				Command: []string{"/bin/bash", "-c", "--"},
				Args:    []string{"ulimit -n ${RAY_START_ULIMIT_OPEN_FILES:-65536}; " + start},
				Ports:   []corev1.ContainerPort{{Name: "metrics", ContainerPort: 8080}},
				Env: append(addressEnv,
					fieldRefEnv("RAY_CLUSTER_NAME", "metadata.labels['ray.io/cluster']"),
					fieldRefEnv("RAY_CLUSTER_NAMESPACE", "metadata.namespace"),
					fieldRefEnv("RAY_CLOUD_INSTANCE_ID", "metadata.name"),
					fieldRefEnv("RAY_NODE_TYPE_NAME", "metadata.labels['ray.io/group']"),
					corev1.EnvVar{Name: "KUBERAY_GEN_RAY_START_CMD", Value: start},
					corev1.EnvVar{Name: "RAY_PORT", Value: "6379"},
					corev1.EnvVar{Name: "RAY_ADDRESS", Value: headFQDN + ":6379"},
					corev1.EnvVar{Name: "RAY_USAGE_STATS_KUBERAY_IN_USE", Value: "1"},
					corev1.EnvVar{Name: "RAY_DASHBOARD_ENABLE_K8S_DISK_USAGE", Value: "1"},
				),
				VolumeMounts:   []corev1.VolumeMount{{Name: "shared-mem", MountPath: "/dev/shm"}},
				LivenessProbe:  wgetProbe(30, 2, 120, rayletCheck),
				ReadinessProbe: wgetProbe(10, 2, 10, rayletCheck),
			}},
			Volumes: []corev1.Volume{{Name: "shared-mem", VolumeSource: corev1.VolumeSource{
				EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory},
			}}},
		},
	}
	got := buildWorker(t, newCluster(), WorkerIndex{}, Options{})
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("worker Pod (-want +got):\n%s", diff)
	}
}
