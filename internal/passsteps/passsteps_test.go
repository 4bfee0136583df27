package passsteps

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
)

// pass is the test scope: the steps that ran, and whether one ended the pass.
type pass struct {
	ran  []string
	stop bool
}

var errBoom = errors.New("boom")

// record is a step that records its name, then ends the pass when it is in
// stopAt and fails when it is in failAt.
func record(name string, stopAt, failAt []string) Step[*pass] {
	return Step[*pass]{Name: name, Run: func(_ context.Context, p *pass) error {
		p.ran = append(p.ran, name)
		p.stop = slices.Contains(stopAt, name)
		if slices.Contains(failAt, name) {
			return errBoom
		}
		return nil
	}}
}

func stopped(p *pass) bool { return p.stop }

func TestRunner(t *testing.T) {
	cases := map[string]struct {
		runner  Runner[*pass]
		stopAt  []string
		failAt  []string
		wantRan []string
		wantErr string // "" for none
	}{
		"all steps in order": {wantRan: []string{"a", "b", "c"}},
		"stop is ignored without Stop": {
			stopAt: []string{"a"}, wantRan: []string{"a", "b", "c"},
		},
		"a step ends the pass": {
			runner: Runner[*pass]{Stop: stopped}, stopAt: []string{"b"}, wantRan: []string{"a", "b"},
		},
		"a failing step stops the rest, unwrapped": {
			failAt: []string{"b"}, wantRan: []string{"a", "b"}, wantErr: "boom",
		},
		"a failing step stops the rest, wrapped": {
			runner: Runner[*pass]{WrapErrors: true}, failAt: []string{"b"}, wantRan: []string{"a", "b"}, wantErr: "b: boom",
		},
		"an error wins over stop": {
			runner: Runner[*pass]{WrapErrors: true, Stop: stopped},
			stopAt: []string{"a"}, failAt: []string{"a"}, wantRan: []string{"a"}, wantErr: "a: boom",
		},
		"logged steps fail unwrapped": {
			runner: Runner[*pass]{LogSteps: true}, failAt: []string{"c"}, wantRan: []string{"a", "b", "c"}, wantErr: "boom",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var steps []Step[*pass]
			for _, n := range []string{"a", "b", "c"} {
				steps = append(steps, record(n, tc.stopAt, tc.failAt))
			}
			p := &pass{}
			err := tc.runner.Run(context.Background(), steps, p)
			if !slices.Equal(p.ran, tc.wantRan) {
				t.Errorf("ran %v, want %v", p.ran, tc.wantRan)
			}
			checkErr(t, err, tc.wantErr)
		})
	}
}

func checkErr(t *testing.T, err error, want string) {
	t.Helper()
	switch {
	case want == "" && err != nil:
		t.Errorf("error %v, want none", err)
	case want == "":
	case err == nil || err.Error() != want:
		t.Errorf("error %v, want %q", err, want)
	case !errors.Is(err, errBoom):
		t.Errorf("error %v does not wrap the step's error", err)
	}
}

// TestLogSteps: with LogSteps each step gets a logger carrying its name,
// its start is logged at V(1) and its failure as an error; without, the
// steps see the caller's logger and nothing is logged.
func TestLogSteps(t *testing.T) {
	for _, logSteps := range []bool{true, false} {
		var lines []string
		log := funcr.New(func(prefix, args string) { lines = append(lines, args) }, funcr.Options{Verbosity: 1})
		ctx := logr.NewContext(context.Background(), log)
		steps := []Step[*pass]{
			{Name: "a", Run: func(ctx context.Context, _ *pass) error { logr.FromContextOrDiscard(ctx).Info("in a"); return nil }},
			{Name: "b", Run: func(context.Context, *pass) error { return errBoom }},
		}
		_ = Runner[*pass]{LogSteps: logSteps}.Run(ctx, steps, &pass{})
		want := []string{`"msg"="in a"`}
		if logSteps {
			want = []string{
				`"level"=1 "msg"="Reconciling" "step"="a"`,
				`"level"=0 "msg"="in a" "step"="a"`,
				`"level"=1 "msg"="Reconciling" "step"="b"`,
				`"msg"="Reconcile step failed" "error"="boom" "step"="b"`,
			}
		}
		if !slices.EqualFunc(lines, want, strings.Contains) {
			t.Errorf("LogSteps %v: logged\n%s\nwant lines containing\n%s", logSteps, strings.Join(lines, "\n"), strings.Join(want, "\n"))
		}
	}
}
