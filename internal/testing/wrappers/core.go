package wrappers

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// PodWrapper builds a Pod.
type PodWrapper struct{ corev1.Pod }

// MakePod returns a Pod with one container "main" and no status.
func MakePod(name, namespace string) *PodWrapper {
	return &PodWrapper{corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "busybox"}}},
	}}
}

// MakeHeadPod returns the head Pod "<cluster>-head" of a RayCluster, labelled
// as the RayCluster controller labels it (ray.io/cluster, ray.io/node-type),
// with one container "ray-head" and no status.
func MakeHeadPod(cluster, namespace string) *PodWrapper {
	w := MakePod(cluster+"-head", namespace).
		Label(rayv1.LabelCluster, cluster).
		Label(rayv1.LabelNodeType, string(rayv1.HeadNode))
	w.Spec.Containers[0].Name = "ray-head"
	w.Spec.Containers[0].Image = "rayproject/ray:" + DefaultRayVersion
	return w
}

// Obj returns a copy of the Pod.
func (w *PodWrapper) Obj() *corev1.Pod { return w.DeepCopy() }

// Label sets a label.
func (w *PodWrapper) Label(key, value string) *PodWrapper {
	w.Labels = set(w.Labels, key, value)
	return w
}

// IP sets status.podIP.
func (w *PodWrapper) IP(ip string) *PodWrapper {
	w.Status.PodIP = ip
	return w
}

// RunningReady puts the Pod in phase Running with the Ready condition True.
func (w *PodWrapper) RunningReady() *PodWrapper {
	w.Status.Phase = corev1.PodRunning
	w.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	return w
}

// Phase sets status.phase and drops the Ready condition.
func (w *PodWrapper) Phase(phase corev1.PodPhase) *PodWrapper {
	w.Status.Phase = phase
	w.Status.Conditions = nil
	return w
}

// Terminating marks the Pod as being deleted since at, held by a finalizer
// (the fake client keeps such objects).
func (w *PodWrapper) Terminating(at time.Time) *PodWrapper {
	w.DeletionTimestamp = &metav1.Time{Time: at}
	w.Finalizers = append(w.Finalizers, "test/hold")
	return w
}

// ServiceWrapper builds a Service.
type ServiceWrapper struct{ corev1.Service }

// MakeService returns a ClusterIP Service with no ports and no selector.
func MakeService(name, namespace string) *ServiceWrapper {
	return &ServiceWrapper{corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP},
	}}
}

// Obj returns a copy of the Service.
func (w *ServiceWrapper) Obj() *corev1.Service { return w.DeepCopy() }

// Label sets a label.
func (w *ServiceWrapper) Label(key, value string) *ServiceWrapper {
	w.Labels = set(w.Labels, key, value)
	return w
}

// Selector sets one key of spec.selector.
func (w *ServiceWrapper) Selector(key, value string) *ServiceWrapper {
	w.Spec.Selector = set(w.Spec.Selector, key, value)
	return w
}

// Port adds a TCP port.
func (w *ServiceWrapper) Port(name string, port int32) *ServiceWrapper {
	w.Spec.Ports = append(w.Spec.Ports, corev1.ServicePort{Name: name, Port: port})
	return w
}

// ClusterIP sets spec.clusterIP and spec.clusterIPs, as the API server
// allocates them.
func (w *ServiceWrapper) ClusterIP(ip string) *ServiceWrapper {
	w.Spec.ClusterIP, w.Spec.ClusterIPs = ip, []string{ip}
	return w
}

// OwnedBy adds a controller owner reference to owner, a ray.io/v1 object of
// kind ownerKind.
func (w *ServiceWrapper) OwnedBy(owner metav1.Object, ownerKind string) *ServiceWrapper {
	w.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(owner, rayv1.GroupVersion.WithKind(ownerKind))}
	return w
}

// EndpointSliceWrapper builds an EndpointSlice.
type EndpointSliceWrapper struct{ discoveryv1.EndpointSlice }

// MakeEndpointSlice returns an IPv4 EndpointSlice of Service service
// (labelled kubernetes.io/service-name) with no endpoints.
func MakeEndpointSlice(name, namespace, service string) *EndpointSliceWrapper {
	return &EndpointSliceWrapper{discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: map[string]string{discoveryv1.LabelServiceName: service}},
		AddressType: discoveryv1.AddressTypeIPv4,
	}}
}

// Obj returns a copy of the EndpointSlice.
func (w *EndpointSliceWrapper) Obj() *discoveryv1.EndpointSlice { return w.DeepCopy() }

// Endpoint adds the endpoint of the Pod with UID podUID, ready or not. Its
// address is derived from its position in the slice.
func (w *EndpointSliceWrapper) Endpoint(podUID string, ready bool) *EndpointSliceWrapper {
	w.Endpoints = append(w.Endpoints, discoveryv1.Endpoint{
		Addresses:  []string{fmt.Sprintf("10.0.0.%d", len(w.Endpoints)+1)},
		Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(ready)},
		TargetRef:  &corev1.ObjectReference{Kind: "Pod", Name: podUID, UID: types.UID(podUID)},
	})
	return w
}
