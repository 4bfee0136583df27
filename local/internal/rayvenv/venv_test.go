package rayvenv

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// fakeVenv makes the layout of a virtualenv of ray version on python.
func fakeVenv(t *testing.T, python, version string) string {
	t.Helper()
	dir := t.TempDir()
	info := filepath.Join(dir, "lib", "python"+python, "site-packages", "ray-"+version+".dist-info")
	if err := os.MkdirAll(info, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestRead(t *testing.T) {
	dir := fakeVenv(t, "3.11", "2.41.0")
	got, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Venv{Dir: dir, Version: "2.41.0", Python: "3.11"}, got); diff != "" {
		t.Errorf("Read (-want +got):\n%s", diff)
	}
	if _, err := Read(t.TempDir()); err == nil || !strings.Contains(err.Error(), "is no Ray virtualenv") {
		t.Errorf("Read(empty dir) error = %v, want is no Ray virtualenv", err)
	}
}
