package operator

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

// TestTrimPod: a cached Pod keeps its metadata (without managedFields), its
// status and the spec fields the controllers read, and nothing else.
func TestTrimPod(t *testing.T) {
	full := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: "rc-head-x", Namespace: "ns", Labels: map[string]string{"ray.io/node-type": "head"},
			Annotations:     map[string]string{"ray.io/kuberay-version": "v1"},
			OwnerReferences: []metav1.OwnerReference{{Kind: "RayCluster", Name: "rc"}},
			ManagedFields:   []metav1.ManagedFieldsEntry{{Manager: "kube-scheduler"}},
		},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever, NodeName: "node-1", SchedulerName: "volcano",
			Containers: []corev1.Container{{
				Name: "ray-head", Image: "rayproject/ray:2.60.0", Command: []string{"/bin/bash", "-c"},
				Env:            []corev1.EnvVar{{Name: "RAY_ADDRESS", Value: "127.0.0.1:6379"}},
				LivenessProbe:  &corev1.Probe{TimeoutSeconds: 5},
				VolumeMounts:   []corev1.VolumeMount{{Name: "shm", MountPath: "/dev/shm"}},
				ReadinessProbe: &corev1.Probe{TimeoutSeconds: 5},
			}, {Name: "autoscaler", Image: "rayproject/ray:2.60.0"}},
			InitContainers: []corev1.Container{{Name: "wait-gcs-ready"}},
			Volumes:        []corev1.Volume{{Name: "shm"}},
		},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.0.0.7",
			ContainerStatuses: []corev1.ContainerStatus{{Name: "ray-head", Ready: true}}},
	}
	got, err := trimPod(full.DeepCopy())
	if err != nil {
		t.Fatal(err)
	}
	want := full.DeepCopy()
	want.ManagedFields = nil
	want.Spec = corev1.PodSpec{
		RestartPolicy: corev1.RestartPolicyNever, NodeName: "node-1", SchedulerName: "volcano",
		Containers: []corev1.Container{{Name: "ray-head", Image: "rayproject/ray:2.60.0"}, {Name: "autoscaler", Image: "rayproject/ray:2.60.0"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("trimmed Pod (-want +got):\n%s", diff)
	}
	tombstone := cache.DeletedFinalStateUnknown{Key: "ns/p"}
	if out, err := trimPod(tombstone); err != nil || out != any(tombstone) {
		t.Errorf("a tombstone came back as %v, %v", out, err)
	}
}

// TestPodCacheIsTrimmed: the Pod informer uses trimPod.
func TestPodCacheIsTrimmed(t *testing.T) {
	for obj, scope := range CacheOptions("").ByObject {
		if _, ok := obj.(*corev1.Pod); !ok {
			continue
		}
		if scope.Transform == nil {
			t.Fatal("the Pod informer has no transform")
		}
		out, err := scope.Transform(&corev1.Pod{Spec: corev1.PodSpec{Volumes: []corev1.Volume{{Name: "v"}}}})
		if err != nil || len(out.(*corev1.Pod).Spec.Volumes) != 0 {
			t.Errorf("the Pod informer's transform kept the volumes: %v, %v", out, err)
		}
		return
	}
	t.Fatal("no Pod informer options")
}
