package wrappers

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// DefaultRayVersion is the Ray version of the default specs; their images
// are rayproject/ray:<version>.
const DefaultRayVersion = "2.60.0"

// RayClusterSpecWrapper builds a RayClusterSpec.
type RayClusterSpecWrapper struct{ rayv1.RayClusterSpec }

// MakeRayClusterSpec returns a spec with a head group only: one container
// "ray-head" running rayproject/ray:DefaultRayVersion.
func MakeRayClusterSpec() *RayClusterSpecWrapper {
	return &RayClusterSpecWrapper{rayv1.RayClusterSpec{
		RayVersion: DefaultRayVersion,
		HeadGroupSpec: rayv1.HeadGroupSpec{
			RayStartParams: map[string]string{},
			Template:       podTemplate("ray-head", DefaultRayVersion),
		},
	}}
}

func podTemplate(container, version string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{
		Name: container, Image: "rayproject/ray:" + version,
	}}}}
}

// Obj returns a copy of the spec.
func (w *RayClusterSpecWrapper) Obj() *rayv1.RayClusterSpec { return w.DeepCopy() }

// RayVersion sets spec.rayVersion and the image of every Ray container.
func (w *RayClusterSpecWrapper) RayVersion(version string) *RayClusterSpecWrapper {
	w.RayClusterSpec.RayVersion = version
	setImage(&w.HeadGroupSpec.Template, version)
	for i := range w.WorkerGroupSpecs {
		setImage(&w.WorkerGroupSpecs[i].Template, version)
	}
	return w
}

func setImage(t *corev1.PodTemplateSpec, version string) {
	if len(t.Spec.Containers) > 0 {
		t.Spec.Containers[0].Image = "rayproject/ray:" + version
	}
}

// WorkerGroup appends a worker group with one container "ray-worker".
func (w *RayClusterSpecWrapper) WorkerGroup(name string, replicas, minReplicas, maxReplicas int32) *RayClusterSpecWrapper {
	w.WorkerGroupSpecs = append(w.WorkerGroupSpecs, rayv1.WorkerGroupSpec{
		GroupName:      name,
		Replicas:       ptr.To(replicas),
		MinReplicas:    ptr.To(minReplicas),
		MaxReplicas:    ptr.To(maxReplicas),
		RayStartParams: map[string]string{},
		Template:       podTemplate("ray-worker", w.RayClusterSpec.RayVersion),
	})
	return w
}

// HeadPort adds a port to the head's Ray container.
func (w *RayClusterSpecWrapper) HeadPort(name string, port int32) *RayClusterSpecWrapper {
	c := &w.HeadGroupSpec.Template.Spec.Containers[0]
	c.Ports = append(c.Ports, corev1.ContainerPort{Name: name, ContainerPort: port})
	return w
}

// Requests sets the resource requests of the Ray container of group: the
// head for rayv1.HeadGroupName, else the worker group of that name.
func (w *RayClusterSpecWrapper) Requests(group string, requests corev1.ResourceList) *RayClusterSpecWrapper {
	w.template(group).Spec.Containers[0].Resources.Requests = requests
	return w
}

// Limits sets the resource limits of the Ray container of group (see
// Requests).
func (w *RayClusterSpecWrapper) Limits(group string, limits corev1.ResourceList) *RayClusterSpecWrapper {
	w.template(group).Spec.Containers[0].Resources.Limits = limits
	return w
}

func (w *RayClusterSpecWrapper) template(group string) *corev1.PodTemplateSpec {
	if group == rayv1.HeadGroupName {
		return &w.HeadGroupSpec.Template
	}
	return &w.workerGroup(group).Template
}

func (w *RayClusterSpecWrapper) workerGroup(name string) *rayv1.WorkerGroupSpec {
	for i := range w.WorkerGroupSpecs {
		if w.WorkerGroupSpecs[i].GroupName == name {
			return &w.WorkerGroupSpecs[i]
		}
	}
	panic("wrappers: no worker group " + name)
}

// Hosts sets numOfHosts of a worker group.
func (w *RayClusterSpecWrapper) Hosts(group string, hosts int32) *RayClusterSpecWrapper {
	w.workerGroup(group).NumOfHosts = hosts
	return w
}

// SuspendGroup suspends a worker group.
func (w *RayClusterSpecWrapper) SuspendGroup(group string) *RayClusterSpecWrapper {
	w.workerGroup(group).Suspend = ptr.To(true)
	return w
}

// Autoscaling turns in-tree autoscaling on.
func (w *RayClusterSpecWrapper) Autoscaling() *RayClusterSpecWrapper {
	w.EnableInTreeAutoscaling = ptr.To(true)
	return w
}

// RollingUpdate sets upgradeStrategy RollingUpdate with the given limits.
func (w *RayClusterSpecWrapper) RollingUpdate(maxSurge, maxUnavailable intstr.IntOrString) *RayClusterSpecWrapper {
	w.UpgradeStrategy = &rayv1.RayClusterUpgradeStrategy{
		Type: ptr.To(rayv1.RayClusterRollingUpdate),
		RollingUpdate: &rayv1.RayClusterRollingUpdateOptions{
			MaxSurge: &maxSurge, MaxUnavailable: &maxUnavailable,
		},
	}
	return w
}

// Suspend sets spec.suspend.
func (w *RayClusterSpecWrapper) Suspend(suspend bool) *RayClusterSpecWrapper {
	w.RayClusterSpec.Suspend = ptr.To(suspend)
	return w
}

// RayClusterWrapper builds a RayCluster.
type RayClusterWrapper struct{ rayv1.RayCluster }

// MakeRayCluster returns a cluster with MakeRayClusterSpec's spec and one
// worker group "small" (1 replica, 0 to 3).
func MakeRayCluster(name, namespace string) *RayClusterWrapper {
	return &RayClusterWrapper{rayv1.RayCluster{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec:       *MakeRayClusterSpec().WorkerGroup("small", 1, 0, 3).Obj(),
	}}
}

// Obj returns a copy of the cluster.
func (w *RayClusterWrapper) Obj() *rayv1.RayCluster { return w.DeepCopy() }

// Spec replaces the spec with a copy of spec.
func (w *RayClusterWrapper) Spec(spec *rayv1.RayClusterSpec) *RayClusterWrapper {
	w.RayCluster.Spec = *spec.DeepCopy()
	return w
}

// Label sets a label.
func (w *RayClusterWrapper) Label(key, value string) *RayClusterWrapper {
	w.Labels = set(w.Labels, key, value)
	return w
}

// Annotation sets an annotation.
func (w *RayClusterWrapper) Annotation(key, value string) *RayClusterWrapper {
	w.Annotations = set(w.Annotations, key, value)
	return w
}

// OwnedBy makes the cluster one that owner, a ray.io/v1 object of kind
// ownerKind, created: the ray.io/originated-from-* labels and a controller
// owner reference.
func (w *RayClusterWrapper) OwnedBy(owner metav1.Object, ownerKind string) *RayClusterWrapper {
	w.Label(rayv1.LabelOriginatedFromCRName, owner.GetName())
	w.Label(rayv1.LabelOriginatedFromCRD, ownerKind)
	w.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(owner, rayv1.GroupVersion.WithKind(ownerKind))}
	return w
}

// Terminating marks the cluster as being deleted since at, held by a
// finalizer (the fake client keeps such objects).
func (w *RayClusterWrapper) Terminating(at time.Time) *RayClusterWrapper {
	w.DeletionTimestamp = &metav1.Time{Time: at}
	w.Finalizers = append(w.Finalizers, "test/hold")
	return w
}

// State sets status.state.
func (w *RayClusterWrapper) State(state rayv1.ClusterState) *RayClusterWrapper {
	w.Status.State = state
	return w
}

// HeadPodReady sets the HeadPodReady condition to True, as the RayCluster
// controller does once the head Pod runs and is ready.
func (w *RayClusterWrapper) HeadPodReady() *RayClusterWrapper {
	meta.RemoveStatusCondition(&w.Status.Conditions, string(rayv1.HeadPodReady))
	// Appended rather than set with meta.SetStatusCondition, which would
	// stamp the transition with the real clock.
	w.Status.Conditions = append(w.Status.Conditions, metav1.Condition{
		Type: string(rayv1.HeadPodReady), Status: metav1.ConditionTrue, Reason: "HeadPodRunningAndReady",
	})
	return w
}

// set sets m[key] = value, making m when nil.
func set(m map[string]string, key, value string) map[string]string {
	if m == nil {
		m = map[string]string{}
	}
	m[key] = value
	return m
}
