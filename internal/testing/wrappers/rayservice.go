package wrappers

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// DefaultServeConfig is the serveConfigV2 of MakeRayService: one
// application "app".
const DefaultServeConfig = "applications:\n  - name: app\n    import_path: app:app\n    route_prefix: /\n"

// RayServiceWrapper builds a RayService.
type RayServiceWrapper struct{ rayv1.RayService }

// MakeRayService returns a RayService with UID "uid-<name>", generation 1,
// DefaultServeConfig and MakeRayCluster's cluster spec. It has no
// finalizer and no status.
func MakeRayService(name, namespace string) *RayServiceWrapper {
	return &RayServiceWrapper{rayv1.RayService{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, UID: types.UID("uid-" + name), Generation: 1},
		Spec: rayv1.RayServiceSpec{
			ServeConfigV2:  DefaultServeConfig,
			RayClusterSpec: *MakeRayClusterSpec().WorkerGroup("small", 1, 0, 3).Obj(),
		},
	}}
}

// Obj returns a copy of the RayService.
func (w *RayServiceWrapper) Obj() *rayv1.RayService { return w.DeepCopy() }

// Generation sets metadata.generation.
func (w *RayServiceWrapper) Generation(g int64) *RayServiceWrapper {
	w.RayService.Generation = g
	return w
}

// Label sets a label.
func (w *RayServiceWrapper) Label(key, value string) *RayServiceWrapper {
	w.Labels = set(w.Labels, key, value)
	return w
}

// Annotation sets an annotation.
func (w *RayServiceWrapper) Annotation(key, value string) *RayServiceWrapper {
	w.Annotations = set(w.Annotations, key, value)
	return w
}

// Finalizer adds a finalizer.
func (w *RayServiceWrapper) Finalizer(f string) *RayServiceWrapper {
	w.Finalizers = append(w.Finalizers, f)
	return w
}

// Deleted marks the RayService as being deleted since at. The fake client
// accepts such an object only with a finalizer.
func (w *RayServiceWrapper) Deleted(at time.Time) *RayServiceWrapper {
	w.DeletionTimestamp = &metav1.Time{Time: at}
	return w
}

// ManagedBy sets spec.managedBy.
func (w *RayServiceWrapper) ManagedBy(manager string) *RayServiceWrapper {
	w.Spec.ManagedBy = ptr.To(manager)
	return w
}

// ServeConfig sets spec.serveConfigV2.
func (w *RayServiceWrapper) ServeConfig(config string) *RayServiceWrapper {
	w.Spec.ServeConfigV2 = config
	return w
}

// ClusterSpec replaces spec.rayClusterConfig with a copy of spec.
func (w *RayServiceWrapper) ClusterSpec(spec *rayv1.RayClusterSpec) *RayServiceWrapper {
	w.Spec.RayClusterSpec = *spec.DeepCopy()
	return w
}

// UpgradeType sets spec.upgradeStrategy.type.
func (w *RayServiceWrapper) UpgradeType(t rayv1.RayServiceUpgradeType) *RayServiceWrapper {
	if w.Spec.UpgradeStrategy == nil {
		w.Spec.UpgradeStrategy = &rayv1.RayServiceUpgradeStrategy{}
	}
	w.Spec.UpgradeStrategy.Type = ptr.To(t)
	return w
}

// DeletionDelaySeconds sets spec.rayClusterDeletionDelaySeconds.
func (w *RayServiceWrapper) DeletionDelaySeconds(s int32) *RayServiceWrapper {
	w.Spec.RayClusterDeletionDelaySeconds = ptr.To(s)
	return w
}

// ExcludeHeadPodFromServeSvc sets spec.excludeHeadPodFromServeSvc.
func (w *RayServiceWrapper) ExcludeHeadPodFromServeSvc() *RayServiceWrapper {
	w.Spec.ExcludeHeadPodFromServeSvc = true
	return w
}

// Suspend sets spec.suspend.
func (w *RayServiceWrapper) Suspend(suspend bool) *RayServiceWrapper {
	w.Spec.Suspend = suspend
	return w
}

// ServeService sets spec.serveService to a copy of svc.
func (w *RayServiceWrapper) ServeService(svc *corev1.Service) *RayServiceWrapper {
	w.Spec.ServeService = svc.DeepCopy()
	return w
}

// Condition sets a status condition, observed at the current generation,
// replacing one of the same type.
func (w *RayServiceWrapper) Condition(t rayv1.RayServiceConditionType, status metav1.ConditionStatus,
	reason rayv1.RayServiceConditionReason, message string, at time.Time) *RayServiceWrapper {
	c := metav1.Condition{Type: string(t), Status: status, Reason: string(reason), Message: message,
		ObservedGeneration: w.RayService.Generation, LastTransitionTime: metav1.Time{Time: at}}
	for i := range w.Status.Conditions {
		if w.Status.Conditions[i].Type == c.Type {
			w.Status.Conditions[i] = c
			return w
		}
	}
	w.Status.Conditions = append(w.Status.Conditions, c)
	return w
}

// ActiveCluster sets the active cluster's name in status.
func (w *RayServiceWrapper) ActiveCluster(name string) *RayServiceWrapper {
	w.Status.ActiveServiceStatus.RayClusterName = name
	return w
}

// PendingCluster sets the pending cluster's name in status.
func (w *RayServiceWrapper) PendingCluster(name string) *RayServiceWrapper {
	w.Status.PendingServiceStatus.RayClusterName = name
	return w
}

// ActiveApp sets the status of one application of the active cluster.
func (w *RayServiceWrapper) ActiveApp(name, status string) *RayServiceWrapper {
	w.Status.ActiveServiceStatus.Applications = setApp(w.Status.ActiveServiceStatus.Applications, name, status)
	return w
}

// PendingApp sets the status of one application of the pending cluster.
func (w *RayServiceWrapper) PendingApp(name, status string) *RayServiceWrapper {
	w.Status.PendingServiceStatus.Applications = setApp(w.Status.PendingServiceStatus.Applications, name, status)
	return w
}

func setApp(apps map[string]rayv1.AppStatus, name, status string) map[string]rayv1.AppStatus {
	if apps == nil {
		apps = map[string]rayv1.AppStatus{}
	}
	apps[name] = rayv1.AppStatus{Status: status}
	return apps
}

// NumServeEndpoints sets status.numServeEndpoints.
func (w *RayServiceWrapper) NumServeEndpoints(n int32) *RayServiceWrapper {
	w.Status.NumServeEndpoints = n
	return w
}

// ServiceStatus sets status.serviceStatus.
func (w *RayServiceWrapper) ServiceStatus(s rayv1.ServiceStatus) *RayServiceWrapper {
	w.Status.ServiceStatus = s
	return w
}

// ObservedGeneration sets status.observedGeneration.
func (w *RayServiceWrapper) ObservedGeneration(g int64) *RayServiceWrapper {
	w.Status.ObservedGeneration = g
	return w
}

// LastUpdateTime sets status.lastUpdateTime.
func (w *RayServiceWrapper) LastUpdateTime(at time.Time) *RayServiceWrapper {
	w.Status.LastUpdateTime = &metav1.Time{Time: at}
	return w
}
