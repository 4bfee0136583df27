package sandbox

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSysctlRegistryRestoresWhenTheLastHostCloses(t *testing.T) {
	dir := t.TempDir()
	forward, bridged := filepath.Join(dir, "ip_forward"), filepath.Join(dir, "bridge-nf-call-iptables")
	writeFile(t, forward, "0\n")
	writeFile(t, bridged, "0\n")
	r := sysctlRegistry{dir: filepath.Join(dir, "registry"), settings: map[string]string{forward: "1", bridged: "1"}}
	read := func() map[string]string {
		t.Helper()
		v, err := readSysctls(r.settings)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	set := map[string]string{forward: "1", bridged: "1"}
	original := map[string]string{forward: "0", bridged: "0"}

	// A host of a crashed process: its entry names a process that is gone.
	if err := r.acquire("crashed"); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(r.dir, "host-crashed"), "999999999 1")

	if err := r.acquire("a"); err != nil {
		t.Fatal(err)
	}
	if err := r.acquire("b"); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(set, read()); diff != "" {
		t.Fatalf("after acquire (-want +got):\n%s", diff)
	}
	if err := r.release("a"); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(set, read()); diff != "" {
		t.Errorf("after the first of two live hosts closed (-want +got):\n%s", diff)
	}
	if err := r.release("b"); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(original, read()); diff != "" {
		t.Errorf("after the last live host closed (-want +got):\n%s", diff)
	}
	entries, _ := os.ReadDir(r.dir)
	for _, e := range entries {
		if e.Name() != "lock" {
			t.Errorf("registry keeps %s", e.Name())
		}
	}
}
