// Package ownerenqueue enqueues the controlling owner of a watched object, as
// controller-runtime's EnqueueRequestForOwner with OnlyControllerOwner (what
// builder.Owns installs) does, for an owner kind known to be namespaced.
//
// controller-runtime's handler asks the REST mapper for the owner's scope on
// every event; at 10,000 RayClusters those look-ups were a tenth of the
// operator's allocations (docs/dev/benchmarks.md). The kinds this operator
// owns objects with are all namespaced, so nothing needs to be looked up.
package ownerenqueue

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Handler enqueues the object's controller when it is of the namespaced
// kind owner, in the object's namespace. The reference's apiVersion must be
// owner's: controller-runtime's handler also takes another version the API
// server serves, and the CRDs of this operator serve one.
func Handler(owner schema.GroupVersionKind) handler.EventHandler {
	apiVersion, kind := owner.ToAPIVersionAndKind()
	return handler.EnqueueRequestsFromMapFunc(func(_ context.Context, obj client.Object) []reconcile.Request {
		ref := metav1.GetControllerOfNoCopy(obj)
		if ref == nil || ref.Kind != kind || ref.APIVersion != apiVersion {
			return nil
		}
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: ref.Name}}}
	})
}

// Owns is b.Owns(obj) for each of objs, with Handler(owner) in place of
// controller-runtime's owner handler.
func Owns(b *builder.Builder, owner schema.GroupVersionKind, objs ...client.Object) *builder.Builder {
	h := Handler(owner)
	for _, obj := range objs {
		b = b.Watches(obj, h)
	}
	return b
}
