package clusterowner

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/childwrite"
	"github.com/ray-operator/ray-operator/internal/rayservices"
)

// OwnerHeadService is the head Service owner (of kind ownerKind) keeps for
// itself, "<owner>-head-svc", selecting the head of cluster and owned by the
// owner, so that its address survives moves to another cluster.
func OwnerHeadService(owner client.Object, ownerKind string, cluster *rayv1.RayCluster, opts rayservices.HeadServiceOptions) *corev1.Service {
	svc := rayservices.BuildOwnerHeadService(cluster, owner.GetName(), owner.GetNamespace(), ownerKind, opts)
	svc.OwnerReferences = []metav1.OwnerReference{ControllerRef(owner, ownerKind)}
	return svc
}

// SelectedCluster is the cluster a Service selects (its ray.io/cluster
// selector), or "" for a Service that selects none.
func SelectedCluster(svc *corev1.Service) string {
	return svc.Spec.Selector[rayv1.LabelCluster]
}

// ApplyService creates desired, a Service of owner's that selects one
// cluster's Pods, or, when it exists and selects another cluster, moves it to
// desired's cluster: the spec is replaced and the allocated ClusterIPs (which
// cannot change) are kept. As in KubeRay, nothing else about an existing
// Service is updated. It returns the Service as it now is.
func (c Clusters) ApplyService(ctx context.Context, owner runtime.Object, desired *corev1.Service) (*corev1.Service, error) {
	current := &corev1.Service{}
	err := c.Client.Get(ctx, client.ObjectKeyFromObject(desired), current)
	switch {
	case apierrors.IsNotFound(err):
		return desired, c.createService(ctx, owner, desired)
	case err != nil:
		return nil, fmt.Errorf("getting Service %s: %w", client.ObjectKeyFromObject(desired), err)
	case SelectedCluster(current) == SelectedCluster(desired):
		return current, nil
	}
	spec := desired.Spec.DeepCopy()
	spec.ClusterIP, spec.ClusterIPs = current.Spec.ClusterIP, current.Spec.ClusterIPs
	current.Spec = *spec
	if err := c.writer().Update(ctx, owner, current, ServiceEvent(childwrite.Update, current)); err != nil {
		return nil, err
	}
	return current, nil
}

func (c Clusters) createService(ctx context.Context, owner runtime.Object, svc *corev1.Service) error {
	return c.writer().Create(ctx, owner, svc, ServiceEvent(childwrite.Create, svc))
}

// serviceReasons are KubeRay's event reasons of an owner's writes of its
// Services.
var serviceReasons = childwrite.Reasons{
	childwrite.Create: {ReasonCreatedService, ReasonFailedToCreateService},
	childwrite.Update: {ReasonUpdatedService, ReasonFailedToUpdateService},
	childwrite.Delete: {ReasonDeletedService, ReasonFailedToDeleteService},
}

// ServiceEvent is KubeRay's event of the write v of svc, a Service its
// RayJobs and RayServices own: "Created the service ns/name".
func ServiceEvent(v childwrite.Verb, svc *corev1.Service) childwrite.Event {
	return serviceReasons.Event(v, childwrite.Noun("the service", svc))
}
