package sandbox

import (
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/ray-operator/ray-operator/local/internal/pty/ptytest"
)

// console is a terminal client of a process: Stdin, the screen and the
// resize events to give the process, and the shell they make.
type console struct {
	stdin  io.Reader
	screen *ptytest.Screen
	resize chan TerminalSize
	shell  ptytest.Shell
}

func newConsole(t *testing.T) *console {
	r, w := io.Pipe()
	t.Cleanup(func() { _ = w.Close() })
	c := &console{stdin: r, screen: ptytest.NewScreen(), resize: make(chan TerminalSize)}
	c.shell = ptytest.Shell{
		Screen: c.screen,
		Type:   func(keys string) error { _, err := io.WriteString(w, keys); return err },
		Resize: func(rows, cols uint16) error { c.resize <- TerminalSize{Width: cols, Height: rows}; return nil },
	}
	return c
}

// interactiveBash is bash reading commands from its terminal, and its
// environment.
var (
	interactiveBash = []string{"bash", "--norc", "--noprofile", "-i"}
	interactiveEnv  = append(testEnv, "PS1="+ptytest.Prompt)
)

func TestExecTTY(t *testing.T) {
	h := newTestHost(t, 12)
	ctx := testContext(t, time.Minute)
	s, err := h.CreateSandbox(ctx, SandboxSpec{UID: "uid-tty", Namespace: "ns", Name: "tty"})
	if err != nil {
		t.Fatal(err)
	}
	c, _, _ := startBash(t, s, "main", "exec sleep infinity")
	con := newConsole(t)
	codes := make(chan string, 1)
	go func() {
		code, err := c.Exec(ctx, ExecSpec{Args: interactiveBash, Env: interactiveEnv, Stdin: con.stdin, Stdout: con.screen, TTY: true, Resize: con.resize})
		codes <- fmt.Sprint(code, " ", err)
	}()
	if err := con.shell.Check(ctx); err != nil {
		t.Fatal(err)
	}
	_ = con.shell.Type("exit 7\n")
	if got := <-codes; got != "7 <nil>" {
		t.Errorf("Exec with a TTY = %s, want 7 <nil>; the terminal showed %q", got, con.screen)
	}
}

func TestAttachTTY(t *testing.T) {
	h := newTestHost(t, 13)
	ctx := testContext(t, time.Minute)
	s, err := h.CreateSandbox(ctx, SandboxSpec{UID: "uid-attach", Namespace: "ns", Name: "attach"})
	if err != nil {
		t.Fatal(err)
	}
	c, log, _ := startBash(t, s, "main", "", func(cs *ContainerSpec) {
		cs.Args, cs.Env = interactiveBash, interactiveEnv
		cs.TTY, cs.OpenStdin = true, true
	})
	con := newConsole(t)
	attached := make(chan error, 1)
	go func() {
		attached <- c.Attach(ctx, AttachSpec{Stdin: con.stdin, Stdout: con.screen, Resize: con.resize})
	}()
	// The first prompt may have been shown before the attach: ask again.
	if err := con.shell.Type("\n"); err != nil {
		t.Fatal(err)
	}
	if err := con.shell.Check(ctx); err != nil {
		t.Fatal(err)
	}
	_ = con.shell.Type("exit 3\n")
	if err := <-attached; err != nil {
		t.Errorf("Attach: %v", err)
	}
	if code := waitDone(ctx, t, c, log); code != 3 {
		t.Errorf("exit code %d, want 3", code)
	}
	if !strings.Contains(log.String(), "42\r") {
		t.Errorf("the log lacks what the attached client saw: %q", log)
	}
}

func TestAttachStdinOnce(t *testing.T) {
	h := newTestHost(t, 14)
	ctx := testContext(t, time.Minute)
	s, err := h.CreateSandbox(ctx, SandboxSpec{UID: "uid-once", Namespace: "ns", Name: "once"})
	if err != nil {
		t.Fatal(err)
	}
	c, log, stderr := startBash(t, s, "main", "tr a-z A-Z; echo stdin-closed", func(cs *ContainerSpec) {
		cs.OpenStdin, cs.StdinOnce = true, true
	})
	out := newOutput()
	if err := c.Attach(ctx, AttachSpec{Stdin: strings.NewReader("hello\n"), Stdout: out}); err != nil {
		t.Errorf("Attach: %v", err)
	}
	if code := waitDone(ctx, t, c, stderr); code != 0 {
		t.Errorf("exit code %d, want 0", code)
	}
	for what, o := range map[string]*output{"attached client": out, "log": log} {
		if got, want := o.String(), "HELLO\nstdin-closed\n"; got != want {
			t.Errorf("the %s got %q, want %q", what, got, want)
		}
	}
}
