package podinputs

import (
	"context"
	"net/netip"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/ray-operator/ray-operator/local/internal/hostaccess"
)

// Objects are the API objects the node reads for a pod's containers. A
// missing object is reported as an API NotFound error (apierrors.IsNotFound).
type Objects interface {
	// Secret gets a Secret.
	Secret(ctx context.Context, namespace, name string) (*corev1.Secret, error)
	// ConfigMap gets a ConfigMap.
	ConfigMap(ctx context.Context, namespace, name string) (*corev1.ConfigMap, error)
	// Token requests a token for a ServiceAccount (the TokenRequest API).
	Token(ctx context.Context, namespace, serviceAccount string, req *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error)
	// Services lists the Services of a namespace.
	Services(ctx context.Context, namespace string) ([]corev1.Service, error)
	// PersistentVolumeClaim gets a PersistentVolumeClaim.
	PersistentVolumeClaim(ctx context.Context, namespace, name string) (*corev1.PersistentVolumeClaim, error)
	// PersistentVolume gets a PersistentVolume.
	PersistentVolume(ctx context.Context, name string) (*corev1.PersistentVolume, error)
}

// ClientObjects reads the objects from the API server through a clientset.
func ClientObjects(cs kubernetes.Interface) Objects { return clientObjects{cs: cs} }

type clientObjects struct{ cs kubernetes.Interface }

func (o clientObjects) Secret(ctx context.Context, namespace, name string) (*corev1.Secret, error) {
	return o.cs.CoreV1().Secrets(namespace).Get(ctx, name, metav1.GetOptions{})
}

func (o clientObjects) ConfigMap(ctx context.Context, namespace, name string) (*corev1.ConfigMap, error) {
	return o.cs.CoreV1().ConfigMaps(namespace).Get(ctx, name, metav1.GetOptions{})
}

func (o clientObjects) Token(ctx context.Context, namespace, serviceAccount string, req *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error) {
	return o.cs.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, serviceAccount, req, metav1.CreateOptions{})
}

func (o clientObjects) PersistentVolumeClaim(ctx context.Context, namespace, name string) (*corev1.PersistentVolumeClaim, error) {
	return o.cs.CoreV1().PersistentVolumeClaims(namespace).Get(ctx, name, metav1.GetOptions{})
}

func (o clientObjects) PersistentVolume(ctx context.Context, name string) (*corev1.PersistentVolume, error) {
	return o.cs.CoreV1().PersistentVolumes().Get(ctx, name, metav1.GetOptions{})
}

func (o clientObjects) Services(ctx context.Context, namespace string) ([]corev1.Service, error) {
	list, err := o.cs.CoreV1().Services(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	return list.Items, nil
}

// PodFacts are facts about where a pod runs that its spec does not hold.
type PodFacts struct {
	// PodIP is the pod's address (status.podIP); when invalid the pod's
	// status.podIP is used.
	PodIP netip.Addr
	// HostIP is the node's address (status.hostIP); when invalid the pod's
	// status.hostIP is used.
	HostIP netip.Addr
	// NodeName is the node's name (spec.nodeName when the pod has none).
	NodeName string
	// NodeAllocatable is what resourceFieldRef limits.* give for a container
	// without that limit.
	NodeAllocatable corev1.ResourceList
	// KubernetesService is the ClusterIP:port of default/kubernetes, for the
	// KUBERNETES_SERVICE_* and KUBERNETES_PORT* variables; when invalid
	// they are not set.
	KubernetesService netip.AddrPort
	// VolumeOwner owns the files of configMap, secret, downwardAPI and
	// projected volumes, and the directories of persistent volumes, on the
	// host: the host ids of the pod's root (and
	// fsGroup), so that they read as the pod's own; nil leaves them root's.
	VolumeOwner *Owner
	// HostAccess is the node's host-access policy: which persistent
	// volumes' directories the pod may mount (the zero Policy: none).
	HostAccess hostaccess.Policy
}

// Owner is a host uid and gid.
type Owner struct{ UID, GID int }
