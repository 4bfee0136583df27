package raycluster_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-base/featuregate"
	"k8s.io/utils/ptr"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/controller/raycluster"
	"github.com/ray-operator/ray-operator/internal/features"
)

// withGates turns the given feature gates on.
func withGates(t *testing.T, gates ...featuregate.Feature) func(*raycluster.Options) {
	gate := features.NewGate()
	for _, g := range gates {
		if err := gate.Set(string(g) + "=true"); err != nil {
			t.Fatal(err)
		}
	}
	return func(o *raycluster.Options) { o.Features = gate }
}

// newRocksDBCluster is a cluster with one worker on the embedded GCS backend.
func (w *world) newRocksDBCluster(name string, storage *rayv1.GcsEmbeddedStorage) *rayv1.RayCluster {
	rc := w.newCluster(name, group("small", 1))
	rc.Spec.GcsFaultToleranceOptions = &rayv1.GcsFaultToleranceOptions{Backend: rayv1.GcsFTBackendRocksDB, Storage: storage}
	return rc
}

// headGCSVolume returns the claim and the mount of the head's gcs-storage
// volume, and the head's storage env.
func headGCSVolume(t *testing.T, head corev1.Pod) (claim string, mount corev1.VolumeMount, env map[string]string) {
	t.Helper()
	for _, v := range head.Spec.Volumes {
		if v.Name == "gcs-storage" && v.PersistentVolumeClaim != nil {
			claim = v.PersistentVolumeClaim.ClaimName
		}
	}
	env = map[string]string{}
	for _, e := range head.Spec.Containers[0].Env {
		if strings.HasPrefix(e.Name, "RAY_gcs_storage") || strings.Contains(e.Name, "REDIS") || e.Name == "RAY_external_storage_namespace" {
			env[e.Name] = e.Value
		}
	}
	for _, m := range head.Spec.Containers[0].VolumeMounts {
		if m.Name == "gcs-storage" {
			mount = m
		}
	}
	return claim, mount, env
}

// TestEmbeddedGCSStorageManagedPVC: the operator creates <cluster>-gcs-pvc
// from spec.gcsFaultToleranceOptions.storage, controlled by the cluster,
// before the head Pod that mounts it at /data/gcs; the cluster gets no Redis
// cleanup finalizer, and its deletion creates no cleanup Job.
func TestEmbeddedGCSStorageManagedPVC(t *testing.T) {
	w := newWorld(t, withGates(t, features.GCSFaultToleranceEmbeddedStorage))
	w.Create(w.newRocksDBCluster("rocks", &rayv1.GcsEmbeddedStorage{
		Size: ptr.To(resource.MustParse("2Gi")), StorageClassName: ptr.To("fast"), SubPath: "rocks",
	}))
	head := w.WaitPods("rocks", headLabels(), 1)[0]
	rc := w.RayCluster("rocks")

	pvc := &corev1.PersistentVolumeClaim{}
	if !w.Get("rocks-gcs-pvc", pvc) {
		t.Fatal("no PVC rocks-gcs-pvc once the head Pod exists")
	}
	wantSpec := map[string]any{
		"accessModes": []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}, "storage": "2Gi", "class": "fast",
		"label": "rocks", "controller": rc.UID,
	}
	gotSpec := map[string]any{
		"accessModes": pvc.Spec.AccessModes, "storage": ptr.To(pvc.Spec.Resources.Requests[corev1.ResourceStorage]).String(),
		"class": ptr.Deref(pvc.Spec.StorageClassName, ""), "label": pvc.Labels[rayv1.LabelCluster], "controller": controllerUID(pvc),
	}
	if diff := cmp.Diff(wantSpec, gotSpec); diff != "" {
		t.Errorf("PVC (-want +got):\n%s", diff)
	}
	claim, mount, env := headGCSVolume(t, head)
	if claim != "rocks-gcs-pvc" || mount.MountPath != "/data/gcs" || mount.SubPath != "rocks" {
		t.Errorf("head mounts claim %q at %q subPath %q, want rocks-gcs-pvc at /data/gcs subPath rocks", claim, mount.MountPath, mount.SubPath)
	}
	if diff := cmp.Diff(map[string]string{"RAY_gcs_storage": "rocksdb", "RAY_gcs_storage_path": "/data/gcs"}, env); diff != "" {
		t.Errorf("head GCS env (-want +got):\n%s", diff)
	}
	if _, ok := head.Annotations[rayv1.AnnotationExternalStorageNamespace]; ok || head.Annotations[rayv1.AnnotationFTEnabled] != "true" {
		t.Errorf("head annotations = %v, want ft-enabled and no storage namespace", head.Annotations)
	}
	w.WaitEvent("rocks", "CreatedPVC")
	if len(rc.Finalizers) != 0 {
		t.Errorf("finalizers = %v, want none on the embedded backend", rc.Finalizers)
	}

	if err := w.Client.Delete(context.Background(), rc); err != nil {
		t.Fatal(err)
	}
	w.Eventually("the RayCluster to be gone", func() (bool, error) { return w.RayCluster("rocks") == nil, nil })
	if w.Get("rocks-redis-cleanup", &batchv1.Job{}) {
		t.Error("a Redis cleanup Job was created for an embedded-backend cluster")
	}
}

func controllerUID(obj metav1.Object) any {
	if ref := metav1.GetControllerOf(obj); ref != nil {
		return ref.UID
	}
	return nil
}

// TestEmbeddedGCSStorageRetain: deletionPolicy Retain creates the claim
// without an owner reference; switching to DeleteWithCluster gives the
// existing claim the cluster as controller.
func TestEmbeddedGCSStorageRetain(t *testing.T) {
	w := newWorld(t, withGates(t, features.GCSFaultToleranceEmbeddedStorage))
	retain := rayv1.RetainGCSStorageDeletionPolicy
	w.Create(w.newRocksDBCluster("kept", &rayv1.GcsEmbeddedStorage{DeletionPolicy: &retain}))
	w.WaitPods("kept", headLabels(), 1)
	pvc := &corev1.PersistentVolumeClaim{}
	w.WaitGet("kept-gcs-pvc", pvc)
	if len(pvc.OwnerReferences) != 0 {
		t.Errorf("owner references of a retained PVC = %v, want none", pvc.OwnerReferences)
	}
	if got := ptr.To(pvc.Spec.Resources.Requests[corev1.ResourceStorage]).String(); got != "1Gi" {
		t.Errorf("default size = %s, want 1Gi", got)
	}

	del := rayv1.DeleteWithClusterGCSStorageDeletionPolicy
	w.edit("kept", func(rc *rayv1.RayCluster) { rc.Spec.GcsFaultToleranceOptions.Storage.DeletionPolicy = &del })
	uid := w.RayCluster("kept").UID
	w.Eventually("the PVC to be controlled by the cluster", func() (bool, error) {
		return w.Get("kept-gcs-pvc", pvc) && controllerUID(pvc) == uid, nil
	})
}

// TestEmbeddedGCSStorageAdoptsExistingPVC: a <cluster>-gcs-pvc that exists
// already (a retained one, say) is adopted as it is: a size that differs
// from the spec is reported with a warning, not applied.
func TestEmbeddedGCSStorageAdoptsExistingPVC(t *testing.T) {
	w := newWorld(t, withGates(t, features.GCSFaultToleranceEmbeddedStorage))
	w.Create(&corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "again-gcs-pvc"},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
		},
	})
	w.Create(w.newRocksDBCluster("again", &rayv1.GcsEmbeddedStorage{Size: ptr.To(resource.MustParse("3Gi"))}))
	e := w.WaitEvent("again", "FailedToCreatePVC")
	want := "GCS storage PVC " + w.NS + "/again-gcs-pvc already exists and cannot be reconfigured in place (requested size 3Gi != current 1Gi); delete the PVC to recreate it with the new settings"
	if e.Type != corev1.EventTypeWarning || e.Note != want {
		t.Errorf("event = %s %q, want Warning %q", e.Type, e.Note, want)
	}
	head := w.WaitPods("again", headLabels(), 1)[0]
	if claim, _, _ := headGCSVolume(t, head); claim != "again-gcs-pvc" {
		t.Errorf("head claim = %q", claim)
	}
	pvc := &corev1.PersistentVolumeClaim{}
	uid := w.RayCluster("again").UID
	w.Eventually("the adopted PVC to be controlled by the cluster", func() (bool, error) {
		return w.Get("again-gcs-pvc", pvc) && controllerUID(pvc) == uid, nil
	})
	if got := ptr.To(pvc.Spec.Resources.Requests[corev1.ResourceStorage]).String(); got != "1Gi" {
		t.Errorf("adopted PVC size = %s, want it left at 1Gi", got)
	}
}

// TestEmbeddedGCSStorageUserClaim: with storage.claimName the head mounts
// the user's claim, which the operator never creates nor changes; a missing
// one is reported.
func TestEmbeddedGCSStorageUserClaim(t *testing.T) {
	w := newWorld(t, withGates(t, features.GCSFaultToleranceEmbeddedStorage))
	w.Create(w.newRocksDBCluster("byo", &rayv1.GcsEmbeddedStorage{ClaimName: "my-claim"}))
	e := w.WaitEvent("byo", "FailedToCreatePVC")
	want := `GcsFaultToleranceOptions.Storage.ClaimName "my-claim" not found in namespace ` + w.NS + "; the head Pod will not start until it exists"
	if e.Type != corev1.EventTypeWarning || e.Note != want {
		t.Errorf("event = %s %q, want Warning %q", e.Type, e.Note, want)
	}
	head := w.WaitPods("byo", headLabels(), 1)[0]
	if claim, _, _ := headGCSVolume(t, head); claim != "my-claim" {
		t.Errorf("head claim = %q, want my-claim", claim)
	}
	for _, name := range []string{"my-claim", "byo-gcs-pvc"} {
		if w.Get(name, &corev1.PersistentVolumeClaim{}) {
			t.Errorf("PVC %s created by the operator", name)
		}
	}

	mine := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "my-claim"},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
		},
	}
	w.Create(mine)
	// A spec change makes a pass that finds the claim; it must leave it alone.
	w.edit("byo", func(rc *rayv1.RayCluster) { rc.Spec.WorkerGroupSpecs[0].Replicas = ptr.To[int32](2) })
	w.WaitPods("byo", groupLabels("small"), 2)
	claim := &corev1.PersistentVolumeClaim{}
	w.Get("my-claim", claim)
	if claim.ResourceVersion != mine.ResourceVersion || len(claim.OwnerReferences) != 0 {
		t.Errorf("user claim changed: resourceVersion %s -> %s, owners %v", mine.ResourceVersion, claim.ResourceVersion, claim.OwnerReferences)
	}
}

// TestEmbeddedGCSStorageGateOff: without the gate a RocksDB cluster is
// refused and nothing is created.
func TestEmbeddedGCSStorageGateOff(t *testing.T) {
	w := newWorld(t)
	w.Create(w.newRocksDBCluster("nogate", nil))
	e := w.WaitEvent("nogate", "InvalidRayClusterSpec")
	if !strings.Contains(e.Note, "requires the GCSFaultToleranceEmbeddedStorage feature gate to be enabled") {
		t.Errorf("event note = %q", e.Note)
	}
	if w.Get("nogate-gcs-pvc", &corev1.PersistentVolumeClaim{}) {
		t.Error("PVC created with the gate off")
	}
	if pods := w.Pods("nogate", nil); len(pods) != 0 {
		t.Errorf("%d Pods created with the gate off", len(pods))
	}
	if fin := w.RayCluster("nogate").Finalizers; len(fin) != 0 {
		t.Errorf("finalizers = %v", fin)
	}
}
