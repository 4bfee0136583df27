package sandbox

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Delegating a controller to a v2 cgroup enables it in the
// cgroup.subtree_control of the root and of each cgroup above it, not in
// its own (runc enables a container's below a pod's). The limits
// themselves are written by runc's library, which writes only on a
// cgroup file system: the TestCgroupV2VM tests show them.
func TestCgroupV2Delegate(t *testing.T) {
	root := t.TempDir()
	dir, err := cgroupV2{root: root}.delegate("/rayop-x/pod-a", "pids")
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(root, "rayop-x/pod-a"); dir != want {
		t.Errorf("delegate returned %s; want %s", dir, want)
	}
	got := map[string]string{}
	_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			data, _ := os.ReadFile(p)
			rel, _ := filepath.Rel(root, p)
			got[rel] = string(data)
		}
		return nil
	})
	want := map[string]string{
		"cgroup.subtree_control":         "+pids",
		"rayop-x/cgroup.subtree_control": "+pids",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("files after delegate (-want +got):\n%s", diff)
	}
}
