package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// fakeRunc writes a runc stand-in that answers `list` with script.
func fakeRunc(t *testing.T, script string) runcCLI {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "runc")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\ncd "+dir+"\n"+script), 0o755); err != nil {
		t.Fatal(err)
	}
	return runcCLI{binary: bin, root: filepath.Join(dir, "root")}
}

// TestListAcrossAVanishingContainer: runc fails its whole list when a
// container's state goes between reading the root and reading that state
// (its monitor deleting it); list asks again instead of failing the sweep
// that called it (TestDetachedHostIsAdopted failed so in CI).
func TestListAcrossAVanishingContainer(t *testing.T) {
	r := fakeRunc(t, `if [ ! -e listed ]; then
  touch listed
  echo 'time="x" level=error msg="stat /run/runc/short-2: no such file or directory"' >&2
  exit 1
fi
printf 'a\nb\n'
`)
	ids, err := r.list(context.Background())
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	if !slices.Equal(ids, []string{"a", "b"}) {
		t.Errorf("list = %q, want [a b]", ids)
	}
}

// TestListOtherFailure: any other failure is the caller's, with runc's words.
func TestListOtherFailure(t *testing.T) {
	r := fakeRunc(t, `echo 'permission denied' >&2; exit 1
`)
	_, err := r.list(context.Background())
	if err == nil || !strings.Contains(err.Error(), "permission denied") {
		t.Fatalf("list error = %v, want runc's permission denied", err)
	}
}
