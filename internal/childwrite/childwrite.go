// Package childwrite creates, updates, patches and deletes the objects a
// custom resource owns, and reports each write the one way every controller
// here does: KubeRay's event on the owner, a log line, and on failure an
// error that names the object. A write that must differ from the plain one
// (a create that tolerates AlreadyExists, a delete with preconditions) says
// so with an Option whose godoc gives the reason.
package childwrite

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ray-operator/ray-operator/internal/eventrecord"
)

// Verb is a kind of write.
type Verb int

// The writes, with the event action KubeRay records for each (a patch is
// an update to KubeRay).
const (
	Create Verb = iota
	Update
	Patch
	Delete
)

// Action is the event action of the write, as KubeRay records it.
func (v Verb) Action() string {
	return [...]string{"Create", "Update", "Update", "Delete"}[v]
}

// past is how a note or log line says the write was done.
func (v Verb) past() string {
	return [...]string{"Created", "Updated", "Updated", "Deleted"}[v]
}

// infinitive is how a failure note names the write.
func (v Verb) infinitive() string {
	return [...]string{"create", "update", "update", "delete"}[v]
}

// gerund is how a wrapped error names the write.
func (v Verb) gerund() string {
	return [...]string{"creating", "updating", "patching", "deleting"}[v]
}

// Event is what a write records on its owner. An empty reason records no
// event for that outcome.
type Event struct {
	// Reason and Note are the Normal event of a write that was done.
	Reason, Note string
	// FailedReason and FailedNote are the Warning event of a write that
	// failed; the note is followed by ": " (or ErrorAfter) and the error.
	FailedReason, FailedNote string
	// ErrorAfter separates FailedNote from the error; empty means ": ".
	// KubeRay's Redis cleanup Job event uses ", ".
	ErrorAfter string
}

// Noted returns the Event most of KubeRay's children share:
// "Created <noun>" and "Failed to create <noun>: <error>" (likewise for the
// other verbs), with the two reasons.
func Noted(v Verb, noun, reason, failedReason string) Event {
	return Event{
		Reason: reason, Note: v.past() + " " + noun,
		FailedReason: failedReason, FailedNote: "Failed to " + v.infinitive() + " " + noun,
	}
}

// Writer writes an owner's children and records their events on the owner.
// Its zero Events records nothing.
type Writer struct {
	// Client writes the children.
	Client client.Writer
	// Events records the events on the owner.
	Events eventrecord.Recorder
}

// Create creates obj, a child of owner.
func (w Writer) Create(ctx context.Context, owner runtime.Object, obj client.Object, ev Event, opts ...Option) error {
	return w.Report(ctx, owner, Create, obj, ev, w.Client.Create(ctx, obj), opts...)
}

// Update writes obj, a child of owner that the caller changed.
func (w Writer) Update(ctx context.Context, owner runtime.Object, obj client.Object, ev Event, opts ...Option) error {
	return w.Report(ctx, owner, Update, obj, ev, w.Client.Update(ctx, obj), opts...)
}

// Patch patches obj, a child of owner, with patch.
func (w Writer) Patch(ctx context.Context, owner runtime.Object, obj client.Object, patch client.Patch, ev Event, opts ...Option) error {
	return w.Report(ctx, owner, Patch, obj, ev, w.Client.Patch(ctx, obj, patch), opts...)
}

// Delete deletes obj, a child of owner. One that is gone already is no
// failure and, unless NotFoundAsDeleted, records nothing.
func (w Writer) Delete(ctx context.Context, owner runtime.Object, obj client.Object, ev Event, opts ...Option) error {
	o := collect(opts)
	return w.Report(ctx, owner, Delete, obj, ev, w.Client.Delete(ctx, obj, o.deleteOpts...), opts...)
}

// Report reports the outcome err of the write v of obj, a child of owner:
// the event, the log line and the error it returns (nil when the write is
// taken as done). Writes sent some other way (RayCluster's concurrent
// creates) report through it too.
func (w Writer) Report(ctx context.Context, owner runtime.Object, v Verb, obj client.Object, ev Event, err error, opts ...Option) error {
	o := collect(opts)
	kind := kindOf(obj)
	switch {
	case err == nil:
	case v == Create && apierrors.IsAlreadyExists(err) && o.alreadyExists != nil && o.alreadyExists(ctx):
		ctrl.LoggerFrom(ctx).Info("The "+kind+" already exists", "object", klog.KObj(obj))
		return nil
	case v == Create && apierrors.IsAlreadyExists(err) && o.alreadyExistsCreated:
	case v == Delete && apierrors.IsNotFound(err) && !o.notFoundDeleted:
		return nil
	case v == Delete && apierrors.IsNotFound(err):
	default:
		w.failed(owner, v, obj, ev, o, err)
		if o.errorAs != nil {
			return errors.Join(o.errorAs, err)
		}
		if o.raw {
			return err
		}
		return fmt.Errorf("%s %s %s: %w", v.gerund(), kind, client.ObjectKeyFromObject(obj), err)
	}
	ctrl.LoggerFrom(ctx).Info(v.past()+" "+kind, "object", klog.KObj(obj))
	w.done(owner, v, obj, ev, o)
	return nil
}

func (w Writer) done(owner runtime.Object, v Verb, obj client.Object, ev Event, o options) {
	if o.doneBy != nil {
		o.doneBy()
		return
	}
	if ev.Reason == "" {
		return
	}
	w.Events.Eventf(owner, o.related(obj), corev1.EventTypeNormal, ev.Reason, v.Action(), "%s", ev.Note)
}

func (w Writer) failed(owner runtime.Object, v Verb, obj client.Object, ev Event, o options, err error) {
	if ev.FailedReason == "" {
		return
	}
	var related runtime.Object
	if v != Create {
		// A failed create has no object to relate to.
		related = o.related(obj)
	}
	sep := ev.ErrorAfter
	if sep == "" {
		sep = ": "
	}
	w.Events.Eventf(owner, related, corev1.EventTypeWarning, ev.FailedReason, v.Action(), "%s%s%v", ev.FailedNote, sep, err)
}

// kindOf names obj's kind by its Go type ("NetworkPolicy", "Job"), which
// typed objects carry even when their TypeMeta is empty.
func kindOf(obj client.Object) string {
	t := reflect.TypeOf(obj)
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Name()
}

// Noun names obj as most of KubeRay's notes do: "<kind> <namespace>/<name>".
func Noun(kind string, obj client.Object) string {
	return kind + " " + obj.GetNamespace() + "/" + obj.GetName()
}

// Reasons are one kind of child's event reasons by verb: the reason of a
// write done, then of one that failed.
type Reasons map[Verb][2]string

// Event is the Event Noted gives for the write v of noun with these
// reasons.
func (r Reasons) Event(v Verb, noun string) Event {
	return Noted(v, noun, r[v][0], r[v][1])
}
