package rayvenv

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// script writes an installer script with body and returns its path.
func script(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ray-venv.sh")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestInstallReadsTheScriptsVenv(t *testing.T) {
	venv := fakeVenv(t, "3.11", "2.41.0")
	inst := Installer{Script: script(t, `[ "$1" = 2.41.0 ] || exit 3; echo "installing $1" >&2; echo `+venv+"\n")}
	got, err := inst.Install(t.Context(), "2.41.0")
	if err != nil {
		t.Fatal(err)
	}
	if got != (Venv{Dir: venv, Version: "2.41.0", Python: "3.11"}) {
		t.Errorf("Install = %+v", got)
	}
}

func TestInstallErrors(t *testing.T) {
	cases := map[string]struct {
		body, want string
	}{
		"no such release": {
			body: `echo "installing ray[default,serve]==$1 into /cache (first run only)" >&2
echo "ERROR: Could not find a version that satisfies the requirement ray[default,serve]==$1 (from versions: 2.3.0, 2.9.3, 2.60.0)" >&2
echo "ERROR: No matching distribution found for ray[default,serve]==$1" >&2
exit 1
`,
			want: "installing ray[default,serve]==2.999.0: Could not find a version that satisfies the requirement ray[default,serve]==2.999.0 (newest: 2.60.0); No matching distribution found for ray[default,serve]==2.999.0",
		},
		"offline": {
			body: `echo "WARNING: Retrying (Retry(total=0, connect=None, read=None, redirect=None, status=None)) after connection broken by 'NewConnectionError(...: Failed to establish a new connection: [Errno 111] Connection refused')': /simple/ray/" >&2
echo "ERROR: Could not find a version that satisfies the requirement ray[default,serve]==$1 (from versions: none)" >&2
echo "ERROR: No matching distribution found for ray[default,serve]==$1" >&2
exit 1
`,
			want: "installing ray[default,serve]==2.999.0: PyPI is unreachable (NewConnectionError); Could not find a version that satisfies the requirement ray[default,serve]==2.999.0 (from versions: none); No matching distribution found for ray[default,serve]==2.999.0",
		},
		"other failure": {
			body: "echo 'python3 has no venv module' >&2; exit 1\n",
			want: "installing ray[default,serve]==2.999.0: python3 has no venv module; exit status 1",
		},
		"not a venv": {
			body: "echo /nonexistent\n",
			want: "installing ray[default,serve]==2.999.0: /nonexistent is no Ray virtualenv: found 0 lib/python3.*/site-packages/ray-*.dist-info, want 1",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := Installer{Script: script(t, tc.body)}.Install(t.Context(), "2.999.0")
			var ie *InstallError
			if !errors.As(err, &ie) || err.Error() != tc.want {
				t.Errorf("Install error = %v, want *InstallError %q", err, tc.want)
			}
		})
	}
}

// TestInstallTimeoutEndsTheScriptsChildren: a pip that hangs ends with the
// timeout, and so do the script's children (which would hold the lock).
func TestInstallTimeoutEndsTheScriptsChildren(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "child")
	inst := Installer{Script: script(t, "sleep 600 & echo $! >"+pidFile+"; wait\n"), Timeout: 200 * time.Millisecond}
	_, err := inst.Install(t.Context(), "2.41.0")
	if err == nil || err.Error() != "installing ray[default,serve]==2.41.0: no result within 200ms" {
		t.Fatalf("Install error = %v, want the timeout", err)
	}
	pid, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	// Gone, or killed and not yet reaped by init (state Z). The pipes it
	// held close as it starts to exit, which is when Install returns: give
	// the exit a moment to finish.
	stat := "/proc/" + strings.TrimSpace(string(pid)) + "/stat"
	err = wait.PollUntilContextTimeout(t.Context(), 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		s, err := os.ReadFile(stat)
		return err != nil || strings.Contains(string(s), ") Z "), nil
	})
	if err != nil {
		s, _ := os.ReadFile(stat)
		t.Errorf("the script's child outlived the timeout: %s", s)
	}
}
