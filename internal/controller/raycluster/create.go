package raycluster

import (
	"context"
	"fmt"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ray-operator/ray-operator/internal/childwrite"
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
	return r.Children().Create(ctx, s.cluster, obj, ev.event(obj), r.createOptions(s, obj, ev)...)
}

// recordChildCreate reports the outcome err of creating obj, sent with the
// pass's round of Pod creates.
func (r *Reconciler) recordChildCreate(ctx context.Context, s *scope, obj client.Object, ev childEvents, err error) error {
	return r.Children().Report(ctx, s.cluster, childwrite.Create, obj, ev.event(obj), err, r.createOptions(s, obj, ev)...)
}

// createOptions: an object that already exists under the deterministic
// name is one the cache has not shown yet (the next pass sees it), not a
// failure; and a creation is reported as --creation-events says.
func (r *Reconciler) createOptions(s *scope, obj client.Object, ev childEvents) []childwrite.Option {
	return []childwrite.Option{childwrite.IgnoreAlreadyExists(),
		childwrite.DoneBy(func() { r.recordCreation(s, ev, obj.GetNamespace(), obj.GetName()) })}
}

// event is KubeRay's event of creating obj, one of these children.
func (ev childEvents) event(obj client.Object) childwrite.Event {
	return childwrite.Noted(childwrite.Create, childwrite.Noun(ev.kind, obj), ev.created, ev.failed)
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
