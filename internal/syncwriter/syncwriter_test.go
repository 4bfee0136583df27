package syncwriter

import (
	"bytes"
	"strings"
	"sync"
	"testing"
)

// TestWriterKeepsWritesWhole: writes from many goroutines arrive whole, and
// String reads the buffer under the writers' lock (go test -race checks it).
func TestWriterKeepsWritesWhole(t *testing.T) {
	w := New(&bytes.Buffer{})
	line := strings.Repeat("x", 100) + "\n"
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 50 {
				if _, err := w.Write([]byte(line)); err != nil {
					t.Error(err)
				}
				_ = w.String()
			}
		})
	}
	wg.Wait()
	lines := strings.SplitAfter(w.String(), "\n")
	if got := len(lines) - 1; got != 8*50 {
		t.Fatalf("%d lines, want %d", got, 8*50)
	}
	for i, l := range lines[:len(lines)-1] {
		if l != line {
			t.Fatalf("line %d = %q, want %q", i, l, line)
		}
	}
}

// TestWriterSet: Set changes where later writes go; nil discards them.
func TestWriterSet(t *testing.T) {
	var first, second bytes.Buffer
	w := New(nil)
	mustWrite(t, w, "lost ")
	w.Set(&first)
	mustWrite(t, w, "one ")
	w.Set(&second)
	mustWrite(t, w, "two ")
	w.Set(nil)
	mustWrite(t, w, "lost too")
	if first.String() != "one " || second.String() != "two " {
		t.Errorf("first = %q, second = %q, want %q and %q", first.String(), second.String(), "one ", "two ")
	}
	if got := w.String(); got != "" {
		t.Errorf("String with a discarding target = %q, want empty", got)
	}
}

func mustWrite(t *testing.T, w *Writer, s string) {
	t.Helper()
	if _, err := w.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
}
