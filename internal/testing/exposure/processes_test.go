package exposure

import (
	"os"
	"os/exec"
	"slices"
	"testing"
)

// TestProcessTreeHasChildren starts sh, which starts sleep, and expects
// both in this process's tree, after it, and not in the tree of sh's
// sibling.
func TestProcessTreeHasChildren(t *testing.T) {
	sh := exec.Command("sh", "-c", "sleep 60 & echo started; wait")
	out, err := sh.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := sh.Start(); err != nil {
		t.Skipf("no sh here: %v", err)
	}
	t.Cleanup(func() {
		_ = sh.Process.Kill()
		_ = sh.Wait()
	})
	if _, err := out.Read(make([]byte, 8)); err != nil { // sleep has been started
		t.Fatal(err)
	}
	tree, err := ProcessTree(os.Getpid())
	if err != nil {
		t.Skipf("no /proc here: %v", err)
	}
	if tree[0] != os.Getpid() {
		t.Errorf("tree starts with %d, want the root %d", tree[0], os.Getpid())
	}
	shTree, err := ProcessTree(sh.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	if len(shTree) != 2 {
		t.Fatalf("tree of sh = %v, want sh and sleep", shTree)
	}
	for _, pid := range shTree {
		if !slices.Contains(tree, pid) {
			t.Errorf("pid %d of sh's tree %v is not in this process's tree %v", pid, shTree, tree)
		}
	}
}
