// Package prologue is what every controller does before its pass steps,
// in one order: read the object (and forget one that is gone), skip a
// version the controller's own last write replaced, skip one another
// controller manages, and hand one being deleted to its finalizer. What a
// kind does differently is a field of Kind with its reason, not a code path
// of its own.
package prologue

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// Kind is how one controller's prologue reads and screens its object.
type Kind[T client.Object] struct {
	// Name is the kind as logs name it ("RayCluster").
	Name string
	// Reader reads the object: the manager's cache, or the API server
	// where a stale copy would repeat a write (RayCronJob creates RayJobs
	// by schedule time and must not miss its own last status write).
	Reader client.Reader
	// ReadOptions are passed to the read. RayCluster reads the cache's own
	// copy (client.UnsafeDisableDeepCopy) and copies it once in its pass.
	ReadOptions []client.GetOption
	// Forget drops what the controller keeps in memory about an object
	// that no longer exists (metrics, back-offs, expectations); nil keeps
	// nothing.
	Forget func(types.NamespacedName)
	// ReadFailed ends a pass whose read failed; nil returns the error
	// (controller-runtime backs off). RayCronJob retries after a fixed
	// time instead, as its schedule does.
	ReadFailed func(context.Context, error) (ctrl.Result, error)
	// Behind reports a version the controller's own last write replaced,
	// which the pass would redo and fail with a conflict; the write's
	// watch event brings the object back. nil: never (RayJob's is
	// cachelag).
	Behind func(T) bool
	// ManagedBy is the object's spec.managedBy; nil for a kind without the
	// field (RayCronJob), which is always this operator's.
	ManagedBy func(T) *string
	// Finalize handles an object being deleted. nil: nothing to do, its
	// children go with it through their owner references (RayCronJob).
	Finalize func(context.Context, T) (ctrl.Result, error)
}

// Run reads obj by key as k says and screens it, then runs pass on it.
func Run[T client.Object](ctx context.Context, key types.NamespacedName, obj T, k Kind[T],
	pass func(context.Context, T) (ctrl.Result, error)) (ctrl.Result, error) {
	if err := k.Reader.Get(ctx, key, obj, k.ReadOptions...); err != nil {
		return k.readFailed(ctx, key, err)
	}
	if k.Behind != nil && k.Behind(obj) {
		return ctrl.Result{}, nil
	}
	if k.ManagedBy != nil && !rayv1.IsManagedByThisOperator(k.ManagedBy(obj)) {
		ctrl.LoggerFrom(ctx).Info("Skipping "+k.Name+" managed by another controller", "managedBy", *k.ManagedBy(obj))
		return ctrl.Result{}, nil
	}
	ctx = ctrl.LoggerInto(ctx, ctrl.LoggerFrom(ctx).WithValues(lowerFirst(k.Name), klog.KObj(obj)))
	if !obj.GetDeletionTimestamp().IsZero() {
		if k.Finalize == nil {
			return ctrl.Result{}, nil
		}
		return k.Finalize(ctx, obj)
	}
	return pass(ctx, obj)
}

func (k Kind[T]) readFailed(ctx context.Context, key types.NamespacedName, err error) (ctrl.Result, error) {
	if apierrors.IsNotFound(err) {
		if k.Forget != nil {
			k.Forget(key)
		}
		return ctrl.Result{}, nil
	}
	if k.ReadFailed != nil {
		return k.ReadFailed(ctx, err)
	}
	return ctrl.Result{}, err
}

// lowerFirst is the log key of a kind: "rayCluster".
func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return string(s[0]|0x20) + s[1:]
}
