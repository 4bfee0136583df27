package rayjob

import (
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/ownerenqueue"
)

// ControllerName names the controller in logs and events.
const ControllerName = "rayjob-controller"

// SetupWithManager watches RayJobs and the objects they own (RayClusters,
// head Services, submitter Jobs) and adds the reconciler to mgr.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, concurrency int) error {
	if concurrency < 1 {
		concurrency = 1
	}
	b := ctrl.NewControllerManagedBy(mgr).
		Named("rayjob").
		For(&rayv1.RayJob{})
	b = ownerenqueue.Owns(b, rayv1.GroupVersion.WithKind(rayv1.KindRayJob), &rayv1.RayCluster{}, &corev1.Service{}, &batchv1.Job{})
	return b.WithOptions(controller.Options{MaxConcurrentReconciles: concurrency}).
		Complete(r)
}

// NewForManager returns a Reconciler using mgr's client, scheme, uncached
// API reader and an event recorder named ControllerName; deps fields
// already set win.
func NewForManager(mgr ctrl.Manager, deps Deps, opts Options) *Reconciler {
	deps.FillFrom(mgr, ControllerName)
	return New(deps, opts)
}
