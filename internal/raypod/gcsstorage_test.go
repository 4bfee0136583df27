package raypod

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// TestEmbeddedGCSStorage restates KubeRay's configureEmbeddedFT: the head
// gets RAY_gcs_storage=rocksdb and RAY_gcs_storage_path=/data/gcs (unless
// the user sets them), the gcs-storage volume on the resolved claim mounted
// at /data/gcs with storage.subPath, no Redis env nor storage-namespace
// annotation; workers get only the GCS reconnect timeout.
func TestEmbeddedGCSStorage(t *testing.T) {
	tests := map[string]struct {
		storage   *rayv1.GcsEmbeddedStorage
		userEnv   []corev1.EnvVar
		wantEnv   []corev1.EnvVar
		wantClaim string
		wantSub   string
	}{
		"operator-managed claim": {
			wantEnv:   []corev1.EnvVar{{Name: "RAY_gcs_storage", Value: "rocksdb"}, {Name: "RAY_gcs_storage_path", Value: "/data/gcs"}},
			wantClaim: "raycluster-gcs-pvc",
		},
		"user claim with subPath": {
			storage:   &rayv1.GcsEmbeddedStorage{ClaimName: "my-pvc", SubPath: "clusters/foo"},
			wantEnv:   []corev1.EnvVar{{Name: "RAY_gcs_storage", Value: "rocksdb"}, {Name: "RAY_gcs_storage_path", Value: "/data/gcs"}},
			wantClaim: "my-pvc",
			wantSub:   "clusters/foo",
		},
		"user env wins": {
			userEnv:   []corev1.EnvVar{{Name: "RAY_gcs_storage_path", Value: "/elsewhere"}},
			wantEnv:   []corev1.EnvVar{{Name: "RAY_gcs_storage_path", Value: "/elsewhere"}, {Name: "RAY_gcs_storage", Value: "rocksdb"}},
			wantClaim: "raycluster-gcs-pvc",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c := newCluster(func(c *rayv1.RayCluster) {
				c.Spec.GcsFaultToleranceOptions = &rayv1.GcsFaultToleranceOptions{Backend: rayv1.GcsFTBackendRocksDB, Storage: tc.storage}
				headContainer(c).Env = tc.userEnv
			})
			head := buildHead(t, c, Options{})
			ray := head.Spec.Containers[0]
			var gotEnv []corev1.EnvVar
			for _, e := range ray.Env {
				switch e.Name {
				case "RAY_gcs_storage", "RAY_gcs_storage_path":
					gotEnv = append(gotEnv, e)
				case EnvRedisAddress, EnvRedisPassword, EnvRedisUsername, EnvExternalStorageNamespace:
					t.Errorf("Redis env %s on an embedded-storage head", e.Name)
				}
			}
			if diff := cmp.Diff(tc.wantEnv, gotEnv); diff != "" {
				t.Errorf("storage env (-want +got):\n%s", diff)
			}
			wantMount := corev1.VolumeMount{Name: "gcs-storage", MountPath: "/data/gcs", SubPath: tc.wantSub}
			if diff := cmp.Diff([]corev1.VolumeMount{wantMount}, mountsNamed(ray, "gcs-storage")); diff != "" {
				t.Errorf("mount (-want +got):\n%s", diff)
			}
			wantVol := corev1.Volume{Name: "gcs-storage", VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: tc.wantClaim},
			}}
			if diff := cmp.Diff([]corev1.Volume{wantVol}, volumesNamed(head, "gcs-storage")); diff != "" {
				t.Errorf("volume (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(map[string]string{rayv1.AnnotationFTEnabled: "true"}, head.Annotations); diff != "" {
				t.Errorf("annotations (-want +got):\n%s", diff)
			}
			worker := buildWorker(t, c, WorkerIndex{}, Options{})
			if v := volumesNamed(worker, "gcs-storage"); len(v) != 0 {
				t.Errorf("worker has the GCS volume: %v", v)
			}
			if got := env(worker.Spec.Containers[0])[EnvGcsReconnectTimeoutS].Value; got != "600" {
				t.Errorf("worker %s = %q, want 600", EnvGcsReconnectTimeoutS, got)
			}
		})
	}
}

func mountsNamed(c corev1.Container, name string) []corev1.VolumeMount {
	var out []corev1.VolumeMount
	for _, m := range c.VolumeMounts {
		if m.Name == name {
			out = append(out, m)
		}
	}
	return out
}

func volumesNamed(pod *corev1.Pod, name string) []corev1.Volume {
	var out []corev1.Volume
	for _, v := range pod.Spec.Volumes {
		if v.Name == name {
			out = append(out, v)
		}
	}
	return out
}
