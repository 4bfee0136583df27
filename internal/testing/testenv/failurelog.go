package testenv

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
)

// failureLogLines is how many of a manager's last log lines a failed test
// prints.
const failureLogLines = 300

// failureLog keeps the last lines a test's manager logged, so that a test
// that fails (a flake in CI, say) shows what its controllers did, while a
// passing one prints nothing.
type failureLog struct {
	mu    sync.Mutex
	lines []string
	next  int
	full  bool
}

// newFailureLog returns a logger into a ring buffer that t prints when it
// has failed, once its cleanups (the manager's stop among them) have run.
func newFailureLog(t testing.TB) logr.Logger {
	l := &failureLog{lines: make([]string, failureLogLines)}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the manager's last log lines:\n%s", l.String())
		}
	})
	return funcr.New(l.add, funcr.Options{Verbosity: 1})
}

// add records one formatted line.
func (l *failureLog) add(prefix, args string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines[l.next] = fmt.Sprintf("%s %s", prefix, args)
	l.next = (l.next + 1) % len(l.lines)
	if l.next == 0 {
		l.full = true
	}
}

// String returns the recorded lines, oldest first.
func (l *failureLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	ordered := l.lines[:l.next]
	if l.full {
		ordered = append(append([]string{}, l.lines[l.next:]...), l.lines[:l.next]...)
	}
	return strings.Join(ordered, "\n")
}
