package lazylog

import (
	"errors"
	"io"
	"reflect"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/zapr"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// observed is a zapr logger with caller information writing to an
// observer, V(1) enabled.
func observed() (logr.Logger, *observer.ObservedLogs) {
	core, logs := observer.New(zapcore.DebugLevel)
	return zapr.NewLogger(zap.New(core, zap.AddCaller())), logs
}

// write logs the same lines through l, one per line of this function, so
// two loggers given to it report the same callers.
func write(l logr.Logger) {
	l = l.WithValues("controller", "raycluster", "reconcileID", "r-1")
	l.WithName("step").WithValues("step", "pods").V(1).Info("Reconciling", "pod", "p-0")
	l.WithCallDepth(0).Error(errors.New("boom"), "Reconcile step failed", "step", "status")
	l.V(2).Info("not enabled", "x", 1)
	l.Info("no call values")
}

func TestWrapWritesWhatTheBaseWrites(t *testing.T) {
	direct, directLogs := observed()
	lazy, lazyLogs := observed()
	write(direct)
	write(Wrap(lazy))

	want, got := directLogs.AllUntimed(), lazyLogs.AllUntimed()
	if len(got) != 3 || len(want) != 3 {
		t.Fatalf("lines: wrapped wrote %d, base %d; want 3 each", len(got), len(want))
	}
	for i := range want {
		w, g := want[i], got[i]
		if g.Message != w.Message || g.Level != w.Level || g.LoggerName != w.LoggerName {
			t.Errorf("line %d: wrapped %q %v %q, base %q %v %q", i, g.Message, g.Level, g.LoggerName, w.Message, w.Level, w.LoggerName)
		}
		if g.Caller.File != w.Caller.File || g.Caller.Line != w.Caller.Line {
			t.Errorf("line %d: wrapped caller %s:%d, base %s:%d", i, g.Caller.File, g.Caller.Line, w.Caller.File, w.Caller.Line)
		}
		if !reflect.DeepEqual(g.ContextMap(), w.ContextMap()) {
			t.Errorf("line %d: wrapped fields %v, base %v", i, g.ContextMap(), w.ContextMap())
		}
		if keys(g.Context) != keys(w.Context) {
			t.Errorf("line %d: wrapped field order %s, base %s", i, keys(g.Context), keys(w.Context))
		}
	}
}

func keys(fields []zapcore.Field) string {
	s := ""
	for _, f := range fields {
		s += f.Key + ","
	}
	return s
}

func TestWithValuesDoesNotShareHeldValues(t *testing.T) {
	base, logs := observed()
	// Six values then two more leave the parent's slice spare capacity.
	parent := Wrap(base).WithValues("a", 1, "b", 2, "c", 3).WithValues("d", 4)
	first := parent.WithValues("e", 5)
	second := parent.WithValues("f", 6)
	held := []any{"g", 7}
	third := Wrap(base).WithValues(held...)
	held[1] = 8
	third.Info("third")
	first.Info("first")
	second.Info("second")
	lines := logs.AllUntimed()
	abcd := map[string]any{"a": int64(1), "b": int64(2), "c": int64(3), "d": int64(4)}
	if got := lines[0].ContextMap(); !reflect.DeepEqual(got, map[string]any{"g": int64(7)}) {
		t.Errorf("third: %v, want the value held when WithValues was called", got)
	}
	if got, want := lines[1].ContextMap(), with(abcd, "e", int64(5)); !reflect.DeepEqual(got, want) {
		t.Errorf("first: %v, want %v", got, want)
	}
	if got, want := lines[2].ContextMap(), with(abcd, "f", int64(6)); !reflect.DeepEqual(got, want) {
		t.Errorf("second: %v, want %v", got, want)
	}
}

func with(m map[string]any, k string, v any) map[string]any {
	out := map[string]any{k: v}
	for mk, mv := range m {
		out[mk] = mv
	}
	return out
}

func TestWrapKeepsVerbosityAndIsIdempotent(t *testing.T) {
	base, logs := observed()
	l := Wrap(base.V(1))
	if l.GetV() != 1 {
		t.Errorf("V = %d, want 1", l.GetV())
	}
	if again := Wrap(l); again.GetSink() != l.GetSink() {
		t.Error("wrapping a wrapped logger wrapped it twice")
	}
	l.Info("at V(1)")
	if lines := logs.AllUntimed(); len(lines) != 1 || lines[0].Level != zapcore.DebugLevel {
		t.Errorf("lines %v, want one at debug level", lines)
	}
	if Wrap(logr.Discard()).GetSink() != nil {
		t.Error("Discard wrapped")
	}
}

// passSteps stands for the steps of a RayCluster pass, each of which gets
// a logger of its own.
var passSteps = []string{"suspend", "services", "ingress", "rbac", "pods", "status", "idle", "events", "mtls", "netpol"}

// BenchmarkWithValues is a pass's loggers as the operator makes them
// (controller-runtime's values, the reconcile id, a step) on a JSON core at
// info level, the step's V(1) line not written.
func BenchmarkWithValues(b *testing.B) {
	core := zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), zapcore.AddSync(io.Discard), zapcore.InfoLevel)
	base := zapr.NewLogger(zap.New(core))
	for _, c := range []struct {
		name string
		l    logr.Logger
	}{{"zapr", base}, {"lazy", Wrap(base)}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				l := c.l.WithValues("controller", "raycluster", "controllerGroup", "ray.io", "controllerKind", "RayCluster",
					"RayCluster", "ns/c", "namespace", "ns", "name", "c")
				l = l.WithValues("reconcileID", "0b0e3a8c-1c4e-4b7e-9a55-8f0f2f7c1d11")
				for _, step := range passSteps {
					l.WithValues("step", step).V(1).Info("Reconciling")
				}
			}
		})
	}
}

// keeping is a sink that keeps the value slices it is given, as a sink
// that writes asynchronously would.
type keeping struct {
	logr.LogSink
	lines [][]any
}

func (k *keeping) Enabled(int) bool                { return true }
func (k *keeping) Info(_ int, _ string, kv ...any) { k.lines = append(k.lines, kv) }
func (k *keeping) WithName(string) logr.LogSink    { return k }

func TestLinesDoNotShareHeldValues(t *testing.T) {
	base := &keeping{LogSink: zapr.NewLogger(zap.NewNop()).GetSink()}
	// Six values then two more leave the held slice spare capacity.
	l := Wrap(logr.New(base)).WithValues("a", 1, "b", 2, "c", 3).WithValues("d", 4)
	l.Info("first", "e", 5)
	l.Info("second", "f", 6)
	if got := base.lines[0][len(base.lines[0])-2:]; !reflect.DeepEqual(got, []any{"e", 5}) {
		t.Errorf("the first line's own values became %v: the second line wrote over them", got)
	}
}

func TestHeldValuesAreCopies(t *testing.T) {
	base := &keeping{LogSink: zapr.NewLogger(zap.NewNop()).GetSink()}
	kv := []any{"a", 1}
	l := Wrap(logr.New(base)).WithValues(kv...).WithName("n").WithValues("b", 2)
	kv[1] = 99
	l.Info("line", "c", 3)
	if want := []any{"a", 1, "b", 2, "c", 3}; !reflect.DeepEqual(base.lines[0], want) {
		t.Errorf("line values %v, want %v", base.lines[0], want)
	}
}
