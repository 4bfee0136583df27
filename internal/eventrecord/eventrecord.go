// Package eventrecord records the events of a controller through a recorder
// that may be absent: unit tests that do not look at events build the
// controllers without one.
package eventrecord

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
)

// Recorder records events with an events.EventRecorder. Its zero value,
// like one made from a nil recorder, records nothing.
type Recorder struct {
	rec events.EventRecorder
}

// New returns a Recorder that records with rec; nil records nothing.
func New(rec events.EventRecorder) Recorder { return Recorder{rec: rec} }

// Eventf records an event about regarding, with related (nil for none) as
// its related object; the note is formatted from note and args.
func (r Recorder) Eventf(regarding, related runtime.Object, eventType, reason, action, note string, args ...any) {
	if r.rec == nil {
		return
	}
	r.rec.Eventf(regarding, related, eventType, reason, action, note, args...)
}
