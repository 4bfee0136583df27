// Package invalidspec is how every controller reports an object it cannot
// reconcile as written (invalid metadata, spec or status): the reason that
// names what is invalid, a log line and a Warning event. The controller
// then records the failure in the object's status, where users can wait on
// it, and does not requeue: only an edit can fix the object, and the edit
// brings the next pass.
package invalidspec

import (
	"context"
	"errors"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ray-operator/ray-operator/internal/eventrecord"
)

// actionValidate is the events.k8s.io action of the events.
const actionValidate = "Validate"

// Error is a validation failure with the event reason that reports it.
type Error struct {
	// Reason is the event reason, KubeRay's (InvalidRayJobSpec,
	// InvalidRayClusterMetadata, ...).
	Reason string
	// NotePrefix starts the event's note, before "namespace/name: error";
	// KubeRay's RayCluster events say "The RayCluster spec is invalid ".
	NotePrefix string
	// Err is the validation failure.
	Err error
}

// New is an *Error with reason, nil when err is nil.
func New(reason string, err error) error {
	if err == nil {
		return nil
	}
	return &Error{Reason: reason, Err: err}
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Report logs "Invalid <kind>" and records a Warning event about obj whose
// reason is err's, or fallback when err is not an *Error.
func Report(ctx context.Context, rec eventrecord.Recorder, obj client.Object, kind string, err error, fallback string) {
	reason, prefix := fallback, ""
	var invalid *Error
	if errors.As(err, &invalid) {
		reason, prefix = invalid.Reason, invalid.NotePrefix
	}
	ctrl.LoggerFrom(ctx).Info("Invalid "+kind, "reason", reason, "error", err.Error())
	rec.Eventf(obj, nil, corev1.EventTypeWarning, reason, actionValidate, "%s%s/%s: %v", prefix, obj.GetNamespace(), obj.GetName(), err)
}
