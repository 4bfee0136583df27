package client

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/ray-operator/ray-operator/internal/testing/testenv"
	"github.com/ray-operator/ray-operator/pkg/client/clientset/versioned"
	"github.com/ray-operator/ray-operator/pkg/client/informers/externalversions"
)

// labeled is what every generated apply configuration of a kind offers.
type labeled[C any] interface {
	WithLabels(entries map[string]string) C
}

// run is the test of one kind, in a namespace of its own.
func (k kind[T, C]) run(env *testenv.Env, cs versioned.Interface) func(t *testing.T) {
	return func(t *testing.T) {
		ns := env.Namespace(t)
		f := externalversions.NewSharedInformerFactoryWithOptions(cs, 0, externalversions.WithNamespace(ns))
		events := watch[T](t, k.informer(f))
		lister := k.lister(f, ns)
		f.Start(t.Context().Done())
		// Cleanups run after t.Context() is canceled, which stops the informers.
		t.Cleanup(f.Shutdown)

		const name = "typed"
		c := k.client(cs, ns)
		created, err := c.Create(t.Context(), k.object(name, ns), metav1.CreateOptions{FieldManager: "client-test-create"})
		if err != nil {
			t.Fatalf("creating: %v", err)
		}
		events.waitFor(t, "the created object", func(o T) bool { return o.GetUID() == created.GetUID() })
		k.checkLister(t, lister, created)

		spec := k.applySpec(t, c, events, lister, name, ns)
		k.reapplyExtracted(t, c, spec)
		k.applyStatus(t, c, events, lister, name, ns)
		k.applyNothing(t, c, events, lister, name, ns)
	}
}

// applySpec applies a label and a spec map entry as fieldManager, and checks
// the stored object, its managed fields, the informer and the lister. It
// returns the stored object.
func (k kind[T, C]) applySpec(t *testing.T, c typedClient[T, C], events events[T], lister namespaceLister[T], name, ns string) T {
	t.Helper()
	config := k.withSpec(labels(k.apply(name, ns), map[string]string{key: applied}), key, applied)
	got, err := c.Apply(t.Context(), config, metav1.ApplyOptions{FieldManager: fieldManager})
	if err != nil {
		t.Fatalf("applying label and spec: %v", err)
	}
	if got.GetLabels()[key] != applied || k.spec(got, key) != applied {
		t.Errorf("after apply: label %q and spec entry %q, want %q for both", got.GetLabels()[key], k.spec(got, key), applied)
	}
	if !managedBy(got, fieldManager, metav1.ManagedFieldsOperationApply) {
		t.Errorf("after apply: managed fields %+v have no Apply entry of %s", got.GetManagedFields(), fieldManager)
	}
	k.checkStored(t, c, got)
	events.waitFor(t, "the applied label and spec entry", func(o T) bool {
		return o.GetLabels()[key] == applied && k.spec(o, key) == applied
	})
	k.checkLister(t, lister, got)
	return got
}

// reapplyExtracted extracts what fieldManager applied to obj and applies it
// again: the extract holds exactly the label and spec entry, so the object
// does not change (a missing field would be removed, a new resource version
// written).
func (k kind[T, C]) reapplyExtracted(t *testing.T, c typedClient[T, C], obj T) {
	t.Helper()
	extracted, err := k.extract(obj, fieldManager)
	if err != nil {
		t.Fatalf("extracting the applied configuration: %v", err)
	}
	got, err := c.Apply(t.Context(), extracted, metav1.ApplyOptions{FieldManager: fieldManager})
	if err != nil {
		t.Fatalf("applying the extracted configuration: %v", err)
	}
	if got.GetResourceVersion() != obj.GetResourceVersion() || got.GetLabels()[key] != applied || k.spec(got, key) != applied {
		t.Errorf("applying the extract changed the object: resource version %s to %s, label %q, spec entry %q",
			obj.GetResourceVersion(), got.GetResourceVersion(), got.GetLabels()[key], k.spec(got, key))
	}
}

// applyStatus applies a status field through the status subresource; the
// label and spec entry applied before stay.
func (k kind[T, C]) applyStatus(t *testing.T, c typedClient[T, C], events events[T], lister namespaceLister[T], name, ns string) {
	t.Helper()
	const n = 3
	got, err := c.ApplyStatus(t.Context(), k.withStatus(k.apply(name, ns), n), metav1.ApplyOptions{FieldManager: fieldManager})
	if err != nil {
		t.Fatalf("applying status: %v", err)
	}
	if k.status(got) != k.wantStatus(n) {
		t.Errorf("after status apply: status %q, want %q", k.status(got), k.wantStatus(n))
	}
	if got.GetLabels()[key] != applied || k.spec(got, key) != applied {
		t.Errorf("status apply changed the label (%q) or spec entry (%q)", got.GetLabels()[key], k.spec(got, key))
	}
	k.checkStored(t, c, got)
	events.waitFor(t, "the applied status", func(o T) bool { return k.status(o) == k.wantStatus(n) })
	k.checkLister(t, lister, got)
}

// applyNothing applies the bare configuration as fieldManager: server-side
// apply removes the label and spec entry it no longer applies and nobody
// else owns, and keeps the status (applied to the status subresource).
func (k kind[T, C]) applyNothing(t *testing.T, c typedClient[T, C], events events[T], lister namespaceLister[T], name, ns string) {
	t.Helper()
	got, err := c.Apply(t.Context(), k.apply(name, ns), metav1.ApplyOptions{FieldManager: fieldManager})
	if err != nil {
		t.Fatalf("applying without label and spec entry: %v", err)
	}
	_, hasLabel := got.GetLabels()[key]
	if hasLabel || k.spec(got, key) != "" {
		t.Errorf("after bare apply: label present %v, spec entry %q; want both gone", hasLabel, k.spec(got, key))
	}
	if k.status(got) != k.wantStatus(3) {
		t.Errorf("after bare apply: status %q, want %q kept", k.status(got), k.wantStatus(3))
	}
	k.checkStored(t, c, got)
	events.waitFor(t, "the removal of the label and spec entry", func(o T) bool {
		_, hasLabel := o.GetLabels()[key]
		return !hasLabel && k.spec(o, key) == ""
	})
	k.checkLister(t, lister, got)
}

// checkStored reads the object back with the clientset and compares it with
// want, the result of the write before.
func (k kind[T, C]) checkStored(t *testing.T, c typedClient[T, C], want T) {
	t.Helper()
	got, err := c.Get(t.Context(), want.GetName(), metav1.GetOptions{})
	if err != nil {
		t.Fatalf("reading back: %v", err)
	}
	if got.GetResourceVersion() != want.GetResourceVersion() || k.spec(got, key) != k.spec(want, key) ||
		k.status(got) != k.status(want) || got.GetLabels()[key] != want.GetLabels()[key] {
		t.Errorf("stored object differs from the write's result: resourceVersion %s/%s, spec entry %q/%q, status %q/%q",
			got.GetResourceVersion(), want.GetResourceVersion(), k.spec(got, key), k.spec(want, key), k.status(got), k.status(want))
	}
}

// checkLister checks that the lister serves want's resource version once the
// informer delivered the event for it (the cache is written before handlers
// are told).
func (k kind[T, C]) checkLister(t *testing.T, lister namespaceLister[T], want T) {
	t.Helper()
	got, err := lister.Get(want.GetName())
	if err != nil {
		t.Fatalf("lister: %v", err)
	}
	if got.GetUID() != want.GetUID() || got.GetResourceVersion() != want.GetResourceVersion() {
		t.Errorf("lister has uid %s version %s, want %s version %s", got.GetUID(), got.GetResourceVersion(), want.GetUID(), want.GetResourceVersion())
	}
}

// labels sets labels on an apply configuration of any kind.
func labels[C labeled[C]](c C, entries map[string]string) C { return c.WithLabels(entries) }

// managedBy tells whether obj's managed fields have an entry of manager for
// operation.
func managedBy(obj object, manager string, operation metav1.ManagedFieldsOperationType) bool {
	for _, e := range obj.GetManagedFields() {
		if e.Manager == manager && e.Operation == operation {
			return true
		}
	}
	return false
}

// events carries the objects of an informer's add and update notifications.
type events[T object] chan T

// watch registers a handler on informer (before its factory starts) that
// passes the added and updated objects to the returned channel.
func watch[T object](t *testing.T, informer cache.SharedIndexInformer) events[T] {
	t.Helper()
	ch := make(events[T])
	send := func(obj any) {
		if o, ok := obj.(T); ok {
			select {
			case ch <- o:
			case <-t.Context().Done():
			}
		}
	}
	if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { send(obj) },
		UpdateFunc: func(_, obj any) { send(obj) },
	}); err != nil {
		t.Fatal(err)
	}
	return ch
}

// waitFor takes events until one satisfies cond, and fails the test after
// waitTimeout without one.
func (e events[T]) waitFor(t *testing.T, what string, cond func(T) bool) T {
	t.Helper()
	timeout := time.NewTimer(waitTimeout)
	defer timeout.Stop()
	for {
		select {
		case o := <-e:
			if cond(o) {
				return o
			}
		case <-timeout.C:
			t.Fatalf("the informer delivered no event with %s within %v", what, waitTimeout)
		}
	}
}
