package raycluster

import (
	"context"
	"fmt"
	"sync"

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

// createChild creates obj and reports the outcome with an event.
func (r *Reconciler) createChild(ctx context.Context, s *scope, obj client.Object, ev childEvents) error {
	return r.recordChildCreate(ctx, s, obj, ev, r.Client.Create(ctx, obj))
}

// recordChildCreate reports the outcome err of creating obj. An object that
// already exists under the deterministic name is one the cache has not
// shown yet (the next pass sees it), not a failure.
func (r *Reconciler) recordChildCreate(ctx context.Context, s *scope, obj client.Object, ev childEvents, err error) error {
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

// heldCreate is a child's create held back to go out together with the
// pass's next round of Pod creates (see scope.held).
type heldCreate struct {
	obj client.Object
	ev  childEvents
	// created, if set, is called once obj was created (and holds what the
	// API server answered).
	created func()
}

// holdCreate holds back the create of obj until the pass's next round of
// Pod creates, or its end; created, if not nil, is called once obj exists.
func (s *scope) holdCreate(obj client.Object, ev childEvents, created func()) {
	s.held = append(s.held, heldCreate{obj: obj, ev: ev, created: created})
}

// takeHeld returns the held creates and forgets them.
func (s *scope) takeHeld() []heldCreate {
	held := s.held
	s.held = nil
	return held
}

// recordHeldCreates reports the outcomes of held creates, in order, and
// returns the first failure.
func (r *Reconciler) recordHeldCreates(ctx context.Context, s *scope, held []heldCreate, errs []error) error {
	var first error
	for i, h := range held {
		if errs[i] == nil && h.created != nil {
			h.created()
		}
		if apierrors.IsAlreadyExists(errs[i]) {
			s.cacheBehind = true
		}
		if err := r.recordChildCreate(ctx, s, h.obj, h.ev, errs[i]); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// sendHeld sends the creates still held when a pass ends without a round of
// Pod creates (the head Pod exists, the pass stopped before its Pods, or
// the Pods wait for certificates).
func (r *Reconciler) sendHeld(ctx context.Context, s *scope) error {
	held := s.takeHeld()
	if len(held) == 0 {
		return nil
	}
	return r.recordHeldCreates(ctx, s, held, r.sendCreates(ctx, createsOf(held, nil)))
}

// sendCreates sends the creates of objs concurrently and returns each one's
// error, in objs' order.
func (r *Reconciler) sendCreates(ctx context.Context, objs []client.Object) []error {
	errs := make([]error, len(objs))
	if len(objs) == 1 {
		errs[0] = r.Client.Create(ctx, objs[0])
		return errs
	}
	var wg sync.WaitGroup
	for i, obj := range objs {
		wg.Go(func() { errs[i] = r.Client.Create(ctx, obj) })
	}
	wg.Wait()
	return errs
}
