// Package ptytest drives an interactive shell on a terminal from a test:
// what the shell shows collects in a Screen, and Shell checks that the
// shell answers, sees a resize and is interrupted by Ctrl-C.
package ptytest

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"sync"
)

// Screen collects what a terminal shows and waits for patterns in it.
type Screen struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	seen    int // the text up to here has been matched
	changed chan struct{}
}

// NewScreen returns an empty screen.
func NewScreen() *Screen { return &Screen{changed: make(chan struct{})} }

// Write implements io.Writer.
func (s *Screen) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	close(s.changed)
	s.changed = make(chan struct{})
	return s.buf.Write(p)
}

// String is everything the screen showed.
func (s *Screen) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

// Expect waits until re matches what the screen showed since the last
// match, and returns the match and its submatches.
func (s *Screen) Expect(ctx context.Context, re string) ([]string, error) {
	rx := regexp.MustCompile(re)
	for {
		s.mu.Lock()
		text, changed := s.buf.String()[s.seen:], s.changed
		if loc := rx.FindStringSubmatchIndex(text); loc != nil {
			s.seen += loc[1]
			s.mu.Unlock()
			return rx.FindStringSubmatch(text), nil
		}
		s.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for %q on the terminal, which showed %q: %w", re, s.String(), ctx.Err())
		}
	}
}

// Prompt is the prompt Shell expects: give the shell PS1=Prompt.
const Prompt = "tty$ "

// Shell is an interactive shell on a terminal, prompting with Prompt.
type Shell struct {
	// Screen shows the terminal's output.
	Screen *Screen
	// Type sends keystrokes.
	Type func(keys string) error
	// Resize sets the terminal's size in rows and columns.
	Resize func(rows, cols uint16) error
}

// Check waits for the prompt, then checks that the shell answers a
// command, sees a resize to 40x100 with stty, and that Ctrl-C ends a
// sleep with status 130.
func (sh Shell) Check(ctx context.Context) error {
	steps := []func(context.Context) error{
		sh.expecting(regexp.QuoteMeta(Prompt) + "$"),
		sh.typing("echo $((6*7))\n"), sh.expecting(`[\r\n]42\r*\n`),
		sh.resized(40, 100),
		// The child prints ready once it holds the terminal: Ctrl-C is then
		// its, not the shell's.
		sh.typing("sh -c 'echo ready; exec sleep 100'\n"), sh.expecting(`[\r\n]ready\r*\n`),
		sh.typing("\x03"), sh.expecting(regexp.QuoteMeta(Prompt) + "$"),
		sh.typing("echo status=$?\n"), sh.expecting(`[\r\n]status=130\r*\n`),
	}
	for _, step := range steps {
		if err := step(ctx); err != nil {
			return err
		}
	}
	return nil
}

func (sh Shell) typing(keys string) func(context.Context) error {
	return func(context.Context) error { return sh.Type(keys) }
}

func (sh Shell) expecting(re string) func(context.Context) error {
	return func(ctx context.Context) error { _, err := sh.Screen.Expect(ctx, re); return err }
}

// resized resizes the terminal and asks stty for the size until it shows
// the new one: the resize reaches the shell's terminal asynchronously.
func (sh Shell) resized(rows, cols uint16) func(context.Context) error {
	want := fmt.Sprintf("%d %d", rows, cols)
	return func(ctx context.Context) error {
		if err := sh.Resize(rows, cols); err != nil {
			return err
		}
		for range 50 {
			if err := sh.Type("stty size\n"); err != nil {
				return err
			}
			m, err := sh.Screen.Expect(ctx, `(\d+ \d+)\r*\n`)
			if err != nil {
				return err
			}
			if m[1] == want {
				return nil
			}
		}
		return fmt.Errorf("stty size never showed %s: %q", want, sh.Screen.String())
	}
}
