// Package syncwriter holds Writer, the io.Writer that goroutines share: the
// log of the control plane's components, a test manager's log, the scale
// runner's operator log.
package syncwriter

import (
	"fmt"
	"io"
	"sync"
)

// Writer passes each write whole to its target, one at a time, so that the
// lines of goroutines sharing it do not interleave. Its target can change
// (Set) and, when it is a fmt.Stringer such as a *bytes.Buffer, be read
// under the same lock (String).
type Writer struct {
	mu sync.Mutex
	w  io.Writer
}

// New returns a Writer to w (io.Discard for nil).
func New(w io.Writer) *Writer {
	s := &Writer{}
	s.Set(w)
	return s
}

// Write implements io.Writer.
func (s *Writer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// Set makes later writes go to w (io.Discard for nil).
func (s *Writer) Set(w io.Writer) {
	if w == nil {
		w = io.Discard
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.w = w
}

// String returns what the target's String method returns ("" when it has
// none): for a *bytes.Buffer, what was written to it.
func (s *Writer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if str, ok := s.w.(fmt.Stringer); ok {
		return str.String()
	}
	return ""
}
