package cluster_test

import (
	"context"
	"io"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ray-operator/ray-operator/local/internal/pty"
	"github.com/ray-operator/ray-operator/local/internal/pty/ptytest"
)

// ttyPod runs an interactive bash on a terminal with its stdin open, as
// `kubectl run -it` makes one.
const ttyPod = `
apiVersion: v1
kind: Pod
metadata:
  name: tty
spec:
  terminationGracePeriodSeconds: 0
  restartPolicy: Never
  containers:
    - name: shell
      image: rayproject/ray:2.52.0
      command: ["bash", "--norc", "--noprofile", "-i"]
      stdin: true
      tty: true
      env: [{name: PS1, value: "tty$ "}]
      resources: {requests: {cpu: 10m, memory: 32Mi}}
`

// TestTerminal: kubectl exec -it and kubectl attach -it at a real terminal.
// Each bash answers, sees the terminal's resize (kubectl passes SIGWINCH
// on) and is interrupted by Ctrl-C; exec returns the shell's exit code, and
// the log kept what the attached shell showed.
func TestTerminal(t *testing.T) {
	ns := shared.namespace(t)
	shared.applyManifest(t, ns, "ttyPod", []byte(ttyPod))
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	shared.waitPodRunning(ctx, t, ns, "tty")

	execSh := shared.kubectlOnTerminal(ctx, t, "exec", "-it", "-n", ns, "tty", "-c", "shell", "--", "bash", "--norc", "--noprofile", "-i")
	if err := execSh.shell.Check(ctx); err != nil {
		t.Fatalf("kubectl exec -it: %v", err)
	}
	_ = execSh.shell.Type("exit 5\n")
	if code := execSh.wait(t); code != 5 {
		t.Errorf("kubectl exec -it of a shell that exits 5 exited %d", code)
	}

	attachSh := shared.kubectlOnTerminal(ctx, t, "attach", "-it", "-n", ns, "tty", "-c", "shell")
	// kubectl attach shows no prompt the shell printed before it came.
	_ = attachSh.shell.Type("\n")
	if err := attachSh.shell.Check(ctx); err != nil {
		t.Fatalf("kubectl attach -it: %v", err)
	}
	_ = attachSh.shell.Type("exit\n")
	if code := attachSh.wait(t); code != 0 {
		t.Errorf("kubectl attach -it exited %d when the shell ended", code)
	}
	logs, err := shared.kubectl(ctx, "logs", "-n", ns, "tty", "-c", "shell")
	if err != nil || !strings.Contains(logs, "status=130") {
		t.Errorf("kubectl logs lacks what the attached shell showed: %v\n%q", err, logs)
	}
}

// terminalCmd is kubectl running on a terminal of the test's.
type terminalCmd struct {
	cmd   *exec.Cmd
	shell ptytest.Shell
	// output closes once kubectl's terminal output has been read.
	output chan struct{}
}

// kubectlOnTerminal starts kubectl in a session of its own whose
// controlling terminal, 24x80, is its stdin, stdout and stderr.
func (s *suite) kubectlOnTerminal(ctx context.Context, t *testing.T, args ...string) *terminalCmd {
	t.Helper()
	master, slave, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = master.Close() })
	if err := pty.SetSize(master, 24, 80); err != nil {
		t.Fatal(err)
	}
	cmd, err := s.kubectlCmd(ctx, args...)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	err = cmd.Start()
	_ = slave.Close()
	if err != nil {
		t.Fatal(err)
	}
	tc := &terminalCmd{cmd: cmd, output: make(chan struct{})}
	tc.shell = ptytest.Shell{
		Screen: ptytest.NewScreen(),
		Type:   func(keys string) error { _, err := io.WriteString(master, keys); return err },
		// The kernel sends kubectl SIGWINCH: the terminal is its own.
		Resize: func(rows, cols uint16) error { return pty.SetSize(master, rows, cols) },
	}
	go func() {
		defer close(tc.output)
		// The terminal's EIO once kubectl has gone ends the copy.
		_, _ = io.Copy(tc.shell.Screen, master)
	}()
	return tc
}

// wait waits for kubectl to exit and returns its exit code.
func (tc *terminalCmd) wait(t *testing.T) int {
	t.Helper()
	err := tc.cmd.Wait()
	<-tc.output
	if tc.cmd.ProcessState == nil {
		t.Fatalf("kubectl %s: %v", strings.Join(tc.cmd.Args[1:], " "), err)
	}
	code := tc.cmd.ProcessState.ExitCode()
	if code != 0 {
		t.Logf("kubectl %s exited %d; the terminal showed %q", strings.Join(tc.cmd.Args[3:], " "), code, tc.shell.Screen)
	}
	return code
}
