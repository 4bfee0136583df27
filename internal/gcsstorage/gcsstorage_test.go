package gcsstorage

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

func cluster(opts *rayv1.GcsFaultToleranceOptions) *rayv1.RayCluster {
	return &rayv1.RayCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "rc", Namespace: "ns", UID: "uid-1"},
		Spec:       rayv1.RayClusterSpec{GcsFaultToleranceOptions: opts},
	}
}

func rocksdb(s *rayv1.GcsEmbeddedStorage) *rayv1.GcsFaultToleranceOptions {
	return &rayv1.GcsFaultToleranceOptions{Backend: rayv1.GcsFTBackendRocksDB, Storage: s}
}

func TestClusterSettings(t *testing.T) {
	retain := rayv1.RetainGCSStorageDeletionPolicy
	del := rayv1.DeleteWithClusterGCSStorageDeletionPolicy
	type want struct {
		Embedded, UserClaim, Retain bool
		ClaimName, SubPath          string
	}
	tests := map[string]struct {
		opts *rayv1.GcsFaultToleranceOptions
		want want
	}{
		"no FT":          {want: want{ClaimName: "rc-gcs-pvc"}},
		"redis":          {opts: &rayv1.GcsFaultToleranceOptions{RedisAddress: "r:6379"}, want: want{ClaimName: "rc-gcs-pvc"}},
		"explicit redis": {opts: &rayv1.GcsFaultToleranceOptions{Backend: rayv1.GcsFTBackendRedis}, want: want{ClaimName: "rc-gcs-pvc"}},
		"rocksdb":        {opts: rocksdb(nil), want: want{Embedded: true, ClaimName: "rc-gcs-pvc"}},
		"user claim": {
			opts: rocksdb(&rayv1.GcsEmbeddedStorage{ClaimName: "mine", SubPath: "a/b"}),
			want: want{Embedded: true, UserClaim: true, ClaimName: "mine", SubPath: "a/b"},
		},
		"retain":              {opts: rocksdb(&rayv1.GcsEmbeddedStorage{DeletionPolicy: &retain}), want: want{Embedded: true, Retain: true, ClaimName: "rc-gcs-pvc"}},
		"delete with cluster": {opts: rocksdb(&rayv1.GcsEmbeddedStorage{DeletionPolicy: &del}), want: want{Embedded: true, ClaimName: "rc-gcs-pvc"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c := cluster(tc.opts)
			got := want{Embedded(c), UserClaim(c), Retain(c), ClaimName(c), SubPath(c)}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func pvc(modes []corev1.PersistentVolumeAccessMode, size string, class *string) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolumeClaim"},
		ObjectMeta: metav1.ObjectMeta{Name: "rc-gcs-pvc", Namespace: "ns", Labels: map[string]string{"ray.io/cluster": "rc"}},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      modes,
			StorageClassName: class,
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)}},
		},
	}
}

// TestBuildPVC restates KubeRay's BuildGCSStoragePVC: <cluster>-gcs-pvc,
// labelled ray.io/cluster, 1Gi, ReadWriteOnce and the default class unless
// storage says otherwise, and no owner reference.
func TestBuildPVC(t *testing.T) {
	rwo := []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}
	rwx := []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany}
	tests := map[string]struct {
		storage *rayv1.GcsEmbeddedStorage
		want    *corev1.PersistentVolumeClaim
	}{
		"defaults":      {want: pvc(rwo, "1Gi", nil)},
		"empty storage": {storage: &rayv1.GcsEmbeddedStorage{}, want: pvc(rwo, "1Gi", nil)},
		"from the spec": {
			storage: &rayv1.GcsEmbeddedStorage{Size: ptr.To(resource.MustParse("5Gi")), StorageClassName: ptr.To("fast"), AccessModes: rwx},
			want:    pvc(rwx, "5Gi", ptr.To("fast")),
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, BuildPVC(cluster(rocksdb(tc.storage)))); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestDrift(t *testing.T) {
	rwo := []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}
	both := []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce, corev1.ReadOnlyMany}
	swapped := []corev1.PersistentVolumeAccessMode{corev1.ReadOnlyMany, corev1.ReadWriteOnce}
	tests := map[string]struct {
		desired, existing *corev1.PersistentVolumeClaim
		want              string
	}{
		"same":                        {desired: pvc(rwo, "1Gi", nil), existing: pvc(rwo, "1Gi", nil)},
		"same size written otherwise": {desired: pvc(rwo, "1Gi", nil), existing: pvc(rwo, "1024Mi", nil)},
		"unset class matches the resolved default": {desired: pvc(rwo, "1Gi", nil), existing: pvc(rwo, "1Gi", ptr.To("standard"))},
		"modes in another order":                   {desired: pvc(both, "1Gi", nil), existing: pvc(swapped, "1Gi", nil)},
		"everything differs": {
			desired:  pvc(both, "2Gi", ptr.To("fast")),
			existing: pvc(rwo, "1Gi", ptr.To("slow")),
			want:     "requested size 2Gi != current 1Gi; storageClassName fast != current slow; accessModes [ReadWriteOnce ReadOnlyMany] != current [ReadWriteOnce]",
		},
		"class set, live has none": {
			desired:  pvc(rwo, "1Gi", ptr.To("fast")),
			existing: pvc(rwo, "1Gi", nil),
			want:     "storageClassName fast != current <default>",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := Drift(tc.desired, tc.existing); got != tc.want {
				t.Errorf("Drift = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestApplyDeletionPolicy(t *testing.T) {
	retain := rayv1.RetainGCSStorageDeletionPolicy
	owned := cluster(rocksdb(nil))
	ours := metav1.OwnerReference{APIVersion: "ray.io/v1", Kind: "RayCluster", Name: "rc", UID: "uid-1", Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}
	other := metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "cm", UID: "uid-2"}
	foreign := metav1.OwnerReference{APIVersion: "apps/v1", Kind: "StatefulSet", Name: "ss", UID: "uid-3", Controller: ptr.To(true)}
	tests := map[string]struct {
		cluster     *rayv1.RayCluster
		refs        []metav1.OwnerReference
		wantRefs    []metav1.OwnerReference
		wantChanged bool
		wantErr     bool
	}{
		"owned by default":      {cluster: owned, refs: []metav1.OwnerReference{other}, wantRefs: []metav1.OwnerReference{other, ours}, wantChanged: true},
		"already owned":         {cluster: owned, refs: []metav1.OwnerReference{ours}, wantRefs: []metav1.OwnerReference{ours}},
		"retain drops our ref":  {cluster: cluster(rocksdb(&rayv1.GcsEmbeddedStorage{DeletionPolicy: &retain})), refs: []metav1.OwnerReference{other, ours}, wantRefs: []metav1.OwnerReference{other}, wantChanged: true},
		"retain, not owned":     {cluster: cluster(rocksdb(&rayv1.GcsEmbeddedStorage{DeletionPolicy: &retain})), refs: []metav1.OwnerReference{other}, wantRefs: []metav1.OwnerReference{other}},
		"controlled by another": {cluster: owned, refs: []metav1.OwnerReference{foreign}, wantRefs: []metav1.OwnerReference{foreign}, wantErr: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			p := pvc(nil, "1Gi", nil)
			p.OwnerReferences = tc.refs
			changed, err := ApplyDeletionPolicy(tc.cluster, p)
			if (err != nil) != tc.wantErr || changed != tc.wantChanged {
				t.Fatalf("ApplyDeletionPolicy = %t, %v; want changed %t, error %t", changed, err, tc.wantChanged, tc.wantErr)
			}
			if diff := cmp.Diff(tc.wantRefs, p.OwnerReferences); diff != "" {
				t.Errorf("owner references (-want +got):\n%s", diff)
			}
		})
	}
}
