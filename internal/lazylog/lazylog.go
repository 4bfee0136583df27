// Package lazylog defers a logger's WithValues to the lines it writes.
//
// zap encodes the values of With as it is called. controller-runtime adds
// values to the logger of every reconcile (the object, a reconcile id) and
// the pass steps add their own, while almost none of those loggers writes a
// line: at 10,000 RayClusters those encodings were 7.5 % of the operator's
// allocated bytes (docs/dev/benchmarks.md). A Wrap-ped logger keeps the
// values and hands them to the underlying sink with each line it writes,
// which writes the same fields in the same order.
package lazylog

import (
	"github.com/go-logr/logr"
)

// Wrap returns l with its WithValues deferred to the lines it writes.
func Wrap(l logr.Logger) logr.Logger {
	base := l.GetSink()
	if base == nil {
		return l
	}
	if _, wrapped := base.(*sink); wrapped {
		return l
	}
	return logr.New(&sink{base: base}).V(l.GetV())
}

// sink holds the values of WithValues calls not yet handed to base: its own
// call's in kv, the earlier calls' in parent's. A WithValues copies only its
// own values, not all those held (a pass's step logger held sixteen, and
// copying them was 2.9 % of the operator's allocated bytes at 10,000
// RayClusters); a line flattens the chain.
type sink struct {
	base   logr.LogSink
	parent *sink
	kv     []any
	n      int // the number of values held, parent's included
}

var (
	_ logr.LogSink          = (*sink)(nil)
	_ logr.CallDepthLogSink = (*sink)(nil)
)

// Init accounts for the frame the sink adds between the caller and base,
// which its own logr.Logger initialised already.
func (s *sink) Init(logr.RuntimeInfo) {
	s.base = withCallDepth(s.base, 1)
}

// Enabled is base's.
func (s *sink) Enabled(level int) bool {
	return s.base.Enabled(level)
}

// Info writes the line with the held values first.
func (s *sink) Info(level int, msg string, kv ...any) {
	s.base.Info(level, msg, s.with(kv)...)
}

// Error writes the line with the held values first.
func (s *sink) Error(err error, msg string, kv ...any) {
	s.base.Error(err, msg, s.with(kv)...)
}

// WithValues holds a copy of kv after the values held already (the
// caller's slice may change after the call).
func (s *sink) WithValues(kv ...any) logr.LogSink {
	if len(kv) == 0 {
		return s
	}
	return &sink{base: s.base, parent: s, kv: append([]any(nil), kv...), n: s.n + len(kv)}
}

// WithName names base; the held values stay held.
func (s *sink) WithName(name string) logr.LogSink {
	return &sink{base: s.base.WithName(name), parent: s.parent, kv: s.kv, n: s.n}
}

// WithCallDepth passes the depth on to base.
func (s *sink) WithCallDepth(depth int) logr.LogSink {
	return &sink{base: withCallDepth(s.base, depth), parent: s.parent, kv: s.kv, n: s.n}
}

// with is the held values, oldest first, followed by kv, for one line, in
// a slice of the line's own: loggers are shared between goroutines, and a
// sink may keep the slice it is given.
func (s *sink) with(kv []any) []any {
	if s.n == 0 {
		return kv
	}
	out := make([]any, s.n+len(kv))
	copy(out[s.n:], kv)
	end := s.n
	for at := s; at != nil; at = at.parent {
		end -= len(at.kv)
		copy(out[end:], at.kv)
	}
	return out
}

// withCallDepth is base skipping depth more frames when it reports its
// caller, where it can.
func withCallDepth(base logr.LogSink, depth int) logr.LogSink {
	if d, ok := base.(logr.CallDepthLogSink); ok {
		return d.WithCallDepth(depth)
	}
	return base
}
