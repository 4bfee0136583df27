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

// sink holds the values of WithValues calls not yet handed to base.
type sink struct {
	base logr.LogSink
	kv   []any
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

// WithValues holds kv after the values held already, in a slice of its
// own: neither the caller's slice nor the parent's spare capacity.
func (s *sink) WithValues(kv ...any) logr.LogSink {
	return &sink{base: s.base, kv: append(s.kv[:len(s.kv):len(s.kv)], kv...)}
}

// WithName names base; the held values stay held.
func (s *sink) WithName(name string) logr.LogSink {
	return &sink{base: s.base.WithName(name), kv: s.kv}
}

// WithCallDepth passes the depth on to base.
func (s *sink) WithCallDepth(depth int) logr.LogSink {
	return &sink{base: withCallDepth(s.base, depth), kv: s.kv}
}

// with is the held values followed by kv, for one line. The result never
// writes into the held slice's spare capacity: loggers are shared between
// goroutines, and two lines at once would write their values there.
func (s *sink) with(kv []any) []any {
	if len(s.kv) == 0 {
		return kv
	}
	if len(kv) == 0 {
		return s.kv
	}
	return append(s.kv[:len(s.kv):len(s.kv)], kv...)
}

// withCallDepth is base skipping depth more frames when it reports its
// caller, where it can.
func withCallDepth(base logr.LogSink, depth int) logr.LogSink {
	if d, ok := base.(logr.CallDepthLogSink); ok {
		return d.WithCallDepth(depth)
	}
	return base
}
