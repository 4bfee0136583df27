package localpv

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// DefaultStorageClassName is the default StorageClass's name, as on kind.
const DefaultStorageClassName = "standard"

// defaultClassAnnotation makes a StorageClass the one claims without a
// storageClassName get.
const defaultClassAnnotation = "storageclass.kubernetes.io/is-default-class"

// DefaultStorageClass is the cluster's default StorageClass: volumes of
// ProvisionerName, bound once a pod that uses the claim is scheduled (so
// that the volume lands on the pod's node), deleted with their claim.
func DefaultStorageClass() *storagev1.StorageClass {
	return &storagev1.StorageClass{
		ObjectMeta:        metav1.ObjectMeta{Name: DefaultStorageClassName, Annotations: map[string]string{defaultClassAnnotation: "true"}},
		Provisioner:       ProvisionerName,
		ReclaimPolicy:     ptr.To(corev1.PersistentVolumeReclaimDelete),
		VolumeBindingMode: ptr.To(storagev1.VolumeBindingWaitForFirstConsumer),
	}
}

// InstallDefaultStorageClass creates DefaultStorageClass; one that exists
// already is left as it is (a StorageClass's parameters cannot change).
func InstallDefaultStorageClass(ctx context.Context, client kubernetes.Interface) error {
	_, err := client.StorageV1().StorageClasses().Create(ctx, DefaultStorageClass(), metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("installing StorageClass %s: %w", DefaultStorageClassName, err)
	}
	return nil
}
