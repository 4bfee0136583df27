package testenv

import (
	"strconv"
	"strings"
	"testing"
)

func TestFailureLogKeepsTheLastLinesInOrder(t *testing.T) {
	l := &failureLog{lines: make([]string, 3)}
	for i := range 5 {
		l.add("p", strconv.Itoa(i))
	}
	if got, want := l.String(), strings.Join([]string{"p 2", "p 3", "p 4"}, "\n"); got != want {
		t.Fatalf("String() = %q, want %q", got, want)
	}
	short := &failureLog{lines: make([]string, 3)}
	short.add("p", "only")
	if got := short.String(); got != "p only" {
		t.Fatalf("String() = %q, want %q", got, "p only")
	}
}
