package passsteps

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
)

var errBoom = errors.New("boom")

// record is a step that records its name in ran and returns its result
// from results and an error when it is in failAt.
func record(name string, ran *[]string, results map[string]Result, failAt string) Step[*[]string] {
	return Step[*[]string]{Name: name, Run: func(context.Context, *[]string) (Result, error) {
		*ran = append(*ran, name)
		if name == failAt {
			return results[name], errBoom
		}
		return results[name], nil
	}}
}

func TestRunner(t *testing.T) {
	cases := map[string]struct {
		results map[string]Result
		failAt  string
		wantRan []string
		want    Result
		wantErr string // "" for none
	}{
		"all steps in order": {wantRan: []string{"a", "b", "c"}},
		"a step ends the pass": {
			results: map[string]Result{"b": {Stop: true}}, wantRan: []string{"a", "b"}, want: Result{Stop: true},
		},
		"the soonest requeue wins, zero asks for none": {
			results: map[string]Result{"a": Requeue(5 * time.Second), "b": Requeue(2 * time.Second), "c": {}},
			wantRan: []string{"a", "b", "c"}, want: Requeue(2 * time.Second),
		},
		"a stopping step's requeue counts": {
			results: map[string]Result{"a": Requeue(5 * time.Second), "b": {Stop: true, RequeueAfter: 9 * time.Second}},
			wantRan: []string{"a", "b"}, want: Result{Stop: true, RequeueAfter: 5 * time.Second},
		},
		"a failing step stops the rest, named": {
			failAt: "b", wantRan: []string{"a", "b"}, wantErr: "b: boom",
		},
		"an error wins over stop and requeue": {
			results: map[string]Result{"a": {Stop: true, RequeueAfter: time.Second}}, failAt: "a",
			wantRan: []string{"a"}, wantErr: "a: boom",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var ran []string
			var steps []Step[*[]string]
			for _, n := range []string{"a", "b", "c"} {
				steps = append(steps, record(n, &ran, tc.results, tc.failAt))
			}
			got, err := Run(t.Context(), steps, &ran)
			if !slices.Equal(ran, tc.wantRan) {
				t.Errorf("ran %v, want %v", ran, tc.wantRan)
			}
			if got != tc.want {
				t.Errorf("result %+v, want %+v", got, tc.want)
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
	case Cause(err) != errBoom: //nolint:errorlint // Cause must return the step's own error
		t.Errorf("Cause(%v) = %v, want the step's error", err, Cause(err))
	}
}

// TestLogSteps: each step gets a logger carrying its name, its start is
// logged at V(1) and its failure as an error.
func TestLogSteps(t *testing.T) {
	var lines []string
	log := funcr.New(func(_, args string) { lines = append(lines, args) }, funcr.Options{Verbosity: 1})
	ctx := logr.NewContext(context.Background(), log)
	steps := []Step[*int]{
		{Name: "a", Run: func(ctx context.Context, _ *int) (Result, error) {
			logr.FromContextOrDiscard(ctx).Info("in a")
			return Result{}, nil
		}},
		{Name: "b", Run: func(context.Context, *int) (Result, error) { return Result{}, errBoom }},
	}
	_, _ = Run(ctx, steps, new(int))
	want := []string{
		`"level"=1 "msg"="Reconciling" "step"="a"`,
		`"level"=0 "msg"="in a" "step"="a"`,
		`"level"=1 "msg"="Reconciling" "step"="b"`,
		`"msg"="Reconcile step failed" "error"="boom" "step"="b"`,
	}
	if !slices.EqualFunc(lines, want, strings.Contains) {
		t.Errorf("logged\n%s\nwant lines containing\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
}

func TestSooner(t *testing.T) {
	cases := []struct{ a, b, want time.Duration }{
		{0, 0, 0}, {0, 3, 3}, {3, 0, 3}, {2, 3, 2}, {3, 2, 2}, {-1, 4, 4}, {4, -1, 4},
	}
	for _, tc := range cases {
		if got := Sooner(tc.a, tc.b); got != tc.want {
			t.Errorf("Sooner(%v, %v) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestCauseOfOtherErrors(t *testing.T) {
	if got := Cause(errBoom); got != errBoom { //nolint:errorlint // identity is the point
		t.Errorf("Cause(%v) = %v, want it unchanged", errBoom, got)
	}
	if Cause(nil) != nil {
		t.Error("Cause(nil) is not nil")
	}
}
