package raycluster

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// childEvents are the event reasons of creating one kind of child.
type childEvents struct {
	kind    string // as written in messages, e.g. "service"
	created string
	failed  string
}

// ensureExists creates obj unless an object of its kind already has its
// name. Names are deterministic, so a stale cache can at worst make the
// create fail with AlreadyExists, which the next pass resolves.
func (r *Reconciler) ensureExists(ctx context.Context, s *scope, obj client.Object, ev childEvents) error {
	existing, ok := obj.DeepCopyObject().(client.Object)
	if !ok {
		return fmt.Errorf("%T is not a client.Object", obj)
	}
	err := r.Client.Get(ctx, client.ObjectKeyFromObject(obj), existing)
	if err == nil || !apierrors.IsNotFound(err) {
		return err
	}
	return r.createChild(ctx, s, obj, ev)
}

// createChild creates obj and reports the outcome with an event. An object
// that already exists under the deterministic name is one the cache has not
// shown yet (the next pass sees it), not a failure.
func (r *Reconciler) createChild(ctx context.Context, s *scope, obj client.Object, ev childEvents) error {
	err := r.Client.Create(ctx, obj)
	if apierrors.IsAlreadyExists(err) {
		ctrl.LoggerFrom(ctx).Info("The "+ev.kind+" already exists", "object", klog.KObj(obj))
		return nil
	}
	if err != nil {
		r.events.Eventf(s.cluster, nil, corev1.EventTypeWarning, ev.failed, actionCreate,
			"Failed to create %s %s/%s: %v", ev.kind, obj.GetNamespace(), obj.GetName(), err)
		return fmt.Errorf("creating %s %s/%s: %w", ev.kind, obj.GetNamespace(), obj.GetName(), err)
	}
	ctrl.LoggerFrom(ctx).Info("Created "+ev.kind, "object", klog.KObj(obj))
	r.recordCreation(s, ev, obj.GetNamespace(), obj.GetName())
	return nil
}
