package e2eutil

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	localcluster "github.com/ray-operator/ray-operator/local/internal/cluster"
)

// holdLock takes an exclusive flock on a new lock file, as
// hack/test-stages.sh does for its background build, and names it in
// ToolsLockEnv.
func holdLock(t *testing.T) *os.File {
	t.Helper()
	path := filepath.Join(t.TempDir(), "tools.lock")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Close() })
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	t.Setenv(ToolsLockEnv, path)
	return f
}

func TestWaitLaterToolsWaitsForTheBuild(t *testing.T) {
	f := holdLock(t)
	waiting := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- waitLaterTools(t.Context(), localcluster.Options{Gateway: true}, func(tools, _ string) { waiting <- tools })
	}()
	select {
	case tools := <-waiting:
		if tools != "Traefik" {
			t.Errorf("waiting for %q, want Traefik", tools)
		}
	case err := <-done:
		t.Fatalf("returned (%v) while the build held the lock", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_UN); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("after the build: %v", err)
	}
}

func TestWaitLaterToolsOnlyForSuitesThatNeedThem(t *testing.T) {
	holdLock(t)
	called := false
	// A cluster without Kueue or Traefik does not wait, the lock held.
	err := waitLaterTools(t.Context(), localcluster.Options{CertManager: true}, func(string, string) { called = true })
	if err != nil || called {
		t.Fatalf("a suite without Kueue or Traefik waited (%v, called %v)", err, called)
	}
}

func TestWaitLaterToolsWithoutBackgroundBuild(t *testing.T) {
	for name, lock := range map[string]string{"unset": "", "no file": filepath.Join(t.TempDir(), "none.lock")} {
		t.Run(name, func(t *testing.T) {
			t.Setenv(ToolsLockEnv, lock)
			if err := waitLaterTools(t.Context(), localcluster.Options{Kueue: true}, func(string, string) { t.Error("waited") }); err != nil {
				t.Fatal(err)
			}
		})
	}
}
