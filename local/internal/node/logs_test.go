package node

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	clocktesting "k8s.io/utils/clock/testing"
)

// writeTestLog writes three stdout lines a second apart and one stderr line
// without a newline.
func writeTestLog(t *testing.T, dir string, clk *clocktesting.FakeClock) *containerLog {
	t.Helper()
	l, err := openContainerLog(dir, "c", 0, clk)
	if err != nil {
		t.Fatal(err)
	}
	out, errOut := l.stream("stdout"), l.stream("stderr")
	for i := range 3 {
		if _, err := fmt.Fprintf(out, "line %d\n", i); err != nil {
			t.Fatal(err)
		}
		clk.Step(time.Second)
	}
	if _, err := errOut.Write([]byte("partial")); err != nil {
		t.Fatal(err)
	}
	return l
}

func TestContainerLogIsCRIFormat(t *testing.T) {
	dir, clk := t.TempDir(), clocktesting.NewFakeClock(t0)
	if err := writeTestLog(t, dir, clk).Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(logPath(dir, "c", 0))
	if err != nil {
		t.Fatal(err)
	}
	want := "2026-11-23T10:00:00Z stdout F line 0\n2026-11-23T10:00:01Z stdout F line 1\n" +
		"2026-11-23T10:00:02Z stdout F line 2\n2026-11-23T10:00:03Z stderr F partial\n"
	if diff := cmp.Diff(want, string(data)); diff != "" {
		t.Errorf("file (-want +got):\n%s", diff)
	}
}

func TestReadLogOptions(t *testing.T) {
	dir, clk := t.TempDir(), clocktesting.NewFakeClock(t0)
	if err := writeTestLog(t, dir, clk).Close(); err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		opts logOptions
		want string
	}{
		"all":        {logOptions{Tail: -1}, "line 0\nline 1\nline 2\npartial\n"},
		"tail 2":     {logOptions{Tail: 2}, "line 2\npartial\n"},
		"tail 0":     {logOptions{Tail: 0}, ""},
		"since":      {logOptions{Tail: -1, Since: t0.Add(2 * time.Second)}, "line 2\npartial\n"},
		"limitBytes": {logOptions{Tail: -1, LimitBytes: 9}, "line 0\nli"},
		"timestamps": {logOptions{Tail: 1, Timestamps: true}, "2026-11-23T10:00:03Z partial\n"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var b strings.Builder
			if err := readLog(t.Context(), logPath(dir, "c", 0), tc.opts, closedChan, clk, &b); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, b.String()); diff != "" {
				t.Errorf("logs (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReadLogFollowsUntilTheAttemptEnds(t *testing.T) {
	dir, clk := t.TempDir(), clocktesting.NewFakeClock(t0)
	l, err := openContainerLog(dir, "c", 0, clk)
	if err != nil {
		t.Fatal(err)
	}
	out := l.stream("stdout")
	if _, err := out.Write([]byte("first\n")); err != nil {
		t.Fatal(err)
	}
	ended := make(chan struct{})
	pr := newLineReader()
	errc := make(chan error, 1)
	go func() {
		errc <- readLog(context.Background(), logPath(dir, "c", 0), logOptions{Tail: -1, Follow: true}, ended, clk, pr)
	}()
	if got := pr.next(t); got != "first\n" {
		t.Fatalf("first read %q", got)
	}
	if _, err := out.Write([]byte("second\n")); err != nil {
		t.Fatal(err)
	}
	for got := ""; got != "second\n"; {
		clk.Step(100 * time.Millisecond) // the follower's poll tick
		got = pr.poll()
	}
	_ = l.Close()
	close(ended)
	clk.Step(100 * time.Millisecond)
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
}

// lineReader collects writes for a test to read one by one.
type lineReader struct{ ch chan string }

func newLineReader() *lineReader { return &lineReader{ch: make(chan string, 100)} }

func (r *lineReader) Write(b []byte) (int, error) { r.ch <- string(b); return len(b), nil }

func (r *lineReader) next(t *testing.T) string {
	t.Helper()
	select {
	case s := <-r.ch:
		return s
	case <-time.After(10 * time.Second):
		t.Fatal("timed out waiting for a log write")
		return ""
	}
}

func (r *lineReader) poll() string {
	select {
	case s := <-r.ch:
		return s
	default:
		return ""
	}
}
