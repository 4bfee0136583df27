package containerlog

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
	clocktesting "k8s.io/utils/clock/testing"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// t0 is the fake clock's start.
var t0 = time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)

// ended is the done channel of an attempt that has ended.
func ended() <-chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}

// writeTestLog writes, as conmon does, three stdout lines a second apart
// and one stderr line without a newline (a partial record, then its end).
func writeTestLog(t *testing.T, dir string) {
	t.Helper()
	path, err := Create(dir, "c", 0)
	if err != nil {
		t.Fatal(err)
	}
	appendLog(t, path, "2026-11-23T10:00:00+00:00 stdout F line 0\n2026-11-23T10:00:01+00:00 stdout F line 1\n"+
		"2026-11-23T10:00:02.000000000+00:00 stdout F line 2\n2026-11-23T10:00:03+00:00 stderr P partial\n"+
		"2026-11-23T10:00:03+00:00 stderr F \n")
}

// appendLog appends text to the log file at path.
func appendLog(t *testing.T, path, text string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestReadLogOptions(t *testing.T) {
	dir, clk := t.TempDir(), clocktesting.NewFakeClock(t0)
	writeTestLog(t, dir)
	cases := map[string]struct {
		opts Options
		want string
	}{
		"all":        {Options{Tail: -1}, "line 0\nline 1\nline 2\npartial\n"},
		"tail 2":     {Options{Tail: 2}, "line 2\npartial\n"},
		"tail 0":     {Options{Tail: 0}, ""},
		"since":      {Options{Tail: -1, Since: t0.Add(2 * time.Second)}, "line 2\npartial\n"},
		"limitBytes": {Options{Tail: -1, LimitBytes: 9}, "line 0\nli"},
		"timestamps": {Options{Tail: 1, Timestamps: true}, "2026-11-23T10:00:03Z partial\n"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var b strings.Builder
			if err := Read(t.Context(), Path(dir, "c", 0), tc.opts, ended(), clk, &b); err != nil {
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
	path, err := Create(dir, "c", 0)
	if err != nil {
		t.Fatal(err)
	}
	appendLog(t, path, "2026-11-23T10:00:00+00:00 stdout F first\n")
	ended := make(chan struct{})
	pr := newLineReader()
	errc := make(chan error, 1)
	go func() {
		errc <- Read(context.Background(), Path(dir, "c", 0), Options{Tail: -1, Follow: true}, ended, clk, pr)
	}()
	if got := pr.next(t); got != "first\n" {
		t.Fatalf("first read %q", got)
	}
	appendLog(t, path, "2026-11-23T10:00:01+00:00 stdout F second\n")
	for got := ""; got != "second\n"; {
		clk.Step(100 * time.Millisecond) // the follower's poll tick
		got = pr.poll()
	}
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
