package testenv_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/ray-operator/ray-operator/internal/testing/testenv"
)

// orphanDeadline is how long the environment's processes may outlive the
// killed test process.
const orphanDeadline = 60 * time.Second

// envChild selects, in a re-executed test binary, which environment to start
// before waiting to be killed.
const envChild = "TESTENV_ORPHAN_CHILD"

// TestNoOrphansWhenTestProcessDies kills a test process holding an
// environment with SIGKILL, as a `go test -timeout` or a crash would end it
// without cleanups, and checks that its control-plane processes die too.
func TestNoOrphansWhenTestProcessDies(t *testing.T) {
	if os.Getenv(envChild) != "" {
		t.Skip("runs in the parent only")
	}
	for _, mode := range []string{"envtest", "full"} {
		t.Run(mode, func(t *testing.T) {
			child := exec.Command(os.Args[0], "-test.run=^TestOrphanChild$", "-test.v")
			child.Env = append(os.Environ(), envChild+"="+mode)
			child.Stderr = os.Stderr
			stdout, err := child.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := child.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { _ = child.Process.Kill(); _ = child.Wait() }()
			waitForLine(t, stdout, "READY")

			descendants := childrenOf(child.Process.Pid)
			if len(descendants) < 2 {
				t.Fatalf("child runs %d processes, want at least etcd and kube-apiserver", len(descendants))
			}
			_ = child.Process.Kill()
			_ = child.Wait()
			// Generous: on a loaded 2-core machine a killed etcd can take
			// many seconds to finish dying (seen over 15 s in CI).
			var alive []int
			err = wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, orphanDeadline, true, func(context.Context) (bool, error) {
				alive = liveOf(descendants)
				return len(alive) == 0, nil
			})
			if err != nil {
				t.Fatalf("processes outlived the killed test process by %v: %v", orphanDeadline, describe(alive))
			}
		})
	}
}

// TestOrphanChild is the killed process of TestNoOrphansWhenTestProcessDies.
func TestOrphanChild(t *testing.T) {
	mode := os.Getenv(envChild)
	if mode == "" {
		t.Skip("runs only as the child of TestNoOrphansWhenTestProcessDies")
	}
	opts := []testenv.Option{testenv.WithCRDDirs()}
	if mode == "full" {
		opts = append(opts, testenv.WithFullControlPlane(1))
	}
	if _, err := testenv.New(opts...); err != nil {
		t.Fatal(err)
	}
	fmt.Println("READY")
	time.Sleep(time.Minute) // killed before this ends
}

func waitForLine(t *testing.T, r interface{ Read([]byte) (int, error) }, want string) {
	t.Helper()
	scanner := bufio.NewScanner(r)
	for scanner.Scan() {
		if strings.TrimSpace(scanner.Text()) == want {
			return
		}
	}
	t.Fatalf("child ended before printing %s: %v", want, scanner.Err())
}

// childrenOf lists the pids of pid's children.
func childrenOf(pid int) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if fields := statFields(p); len(fields) > 1 && fields[1] == strconv.Itoa(pid) {
			pids = append(pids, p)
		}
	}
	return pids
}

// liveOf returns the pids that still run (zombies count as gone).
func liveOf(pids []int) []int {
	var alive []int
	for _, p := range pids {
		if fields := statFields(p); len(fields) > 0 && fields[0] != "Z" {
			alive = append(alive, p)
		}
	}
	return alive
}

// statFields returns the fields of /proc/<pid>/stat after the command name:
// state, ppid, ...; nil when the process is gone.
func statFields(pid int) []string {
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return nil
	}
	i := strings.LastIndexByte(string(stat), ')')
	return strings.Fields(string(stat[i+1:]))
}

// describe gives each pid's command and state, to tell a process still
// running from one stuck dying (D) under load.
func describe(pids []int) []string {
	out := make([]string, 0, len(pids))
	for _, p := range pids {
		cmd, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(p), "comm"))
		state := "?"
		if fields := statFields(p); len(fields) > 0 {
			state = fields[0]
		}
		out = append(out, fmt.Sprintf("%d %s (%s)", p, strings.TrimSpace(string(cmd)), state))
	}
	return out
}
