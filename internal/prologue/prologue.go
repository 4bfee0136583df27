// Package prologue is what every controller does before its pass steps,
// in one order: read the object (and forget one that is gone), skip a
// version the controller's own last write replaced, skip one another
// controller manages, hand one being deleted to its finalizer (or leave it
// alone if the kind has none), and validate the others. What a
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

// Read is where the prologue reads a kind's object from: FromCache or
// Live.
type Read struct {
	reader client.Reader
	opts   []client.GetOption
}

// FromCache reads the object from the manager's cache: the cache's own
// object, which the prologue screens without copying and copies once for
// the pass, so that a pass it skips costs no copy.
func FromCache(cache client.Reader) Read {
	return Read{reader: cache, opts: []client.GetOption{client.UnsafeDisableDeepCopy}}
}

// Live reads the object from the API server, for a kind that must never
// act on a stale copy (its reason is at the caller). A live read is never
// behind the controller's own writes.
func Live(apiServer client.Reader) Read {
	return Read{reader: apiServer}
}

// Kind is how one controller's prologue reads and screens its object.
type Kind[T client.Object] struct {
	// Name is the kind as logs name it ("RayCluster").
	Name string
	// Read is where the object is read from.
	Read Read
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
	// watch event brings the object back. nil: never. Only a kind whose
	// watch passes its own status writes can skip such a version (RayJob,
	// with cachelag): RayCluster and RayService filter those events out,
	// so a skipped pass would wait for the next requeue where the
	// conflict's retry comes within milliseconds; RayCronJob reads Live.
	Behind func(T) bool
	// ManagedBy is the object's spec.managedBy; nil for a kind without the
	// field (RayCronJob), which is always this operator's.
	ManagedBy func(T) *string
	// Finalize handles an object being deleted, on the pass's copy. nil:
	// nothing to do and no pass: its children go with it through their
	// owner references (RayCronJob: one held by foreground deletion creates
	// no more RayJobs, as a batch/v1 CronJob; KubeRay's controller does not
	// look at the deletion and keeps the schedule).
	Finalize func(context.Context, T) (ctrl.Result, error)
	// Validate checks an object that is not being deleted before its
	// pass; an error ends the pass in Invalid instead. nil: nothing to
	// check here (RayCronJob validates in a step: its RayJobs are observed
	// first, so that status.active stays true of an invalid one, and its
	// SpecValid condition is set either way).
	Validate func(T) error
	// Invalid reports an object Validate refused (an event, a condition the
	// user can wait on) on the pass's copy and ends the pass.
	Invalid func(ctx context.Context, obj T, err error) (ctrl.Result, error)
}

// Pass is a kind's pass over obj, its own copy of the object. read is the
// object as it was read, which the pass must not change: RayCluster
// compares the status it computes with it instead of copying again.
type Pass[T client.Object] func(ctx context.Context, obj, read T) (ctrl.Result, error)

// Run reads obj by key as k says and screens it, then runs pass on a copy
// of it.
func Run[T client.Object](ctx context.Context, key types.NamespacedName, obj T, k Kind[T], pass Pass[T]) (ctrl.Result, error) {
	if err := k.Read.reader.Get(ctx, key, obj, k.Read.opts...); err != nil {
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
	own, _ := obj.DeepCopyObject().(T)
	if !obj.GetDeletionTimestamp().IsZero() {
		if k.Finalize == nil {
			return ctrl.Result{}, nil
		}
		return k.Finalize(ctx, own)
	}
	if k.Validate != nil {
		if err := k.Validate(own); err != nil {
			return k.Invalid(ctx, own, err)
		}
	}
	return pass(ctx, own, obj)
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
