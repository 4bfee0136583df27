package exposure

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSecret(t *testing.T) {
	for rel, want := range map[string]bool{
		"pki/apiserver.crt":        true,
		"pki/sub/x":                true,
		"kubeconfig":               true,
		"webhook-certs/tls.key":    true,
		"tokens.csv":               true,
		"kube-apiserver.log":       false,
		"kube-proxy.yaml":          false,
		"webhook-certs/tls.crt":    false,
		"node/pods/u/etc/hosts":    false,
		"node/pkiish/kubeconfigs":  false,
		"etcd/member/snap/db":      false,
		"node/pods/u/pki-notes.md": false,
	} {
		if got := Secret(rel); got != want {
			t.Errorf("Secret(%q) = %v, want %v", rel, got, want)
		}
	}
}

func TestLooseFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(rel string, mode os.FileMode) {
		t.Helper()
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil { // past the umask
			t.Fatal(err)
		}
	}
	write("kubeconfig", 0o600)
	write("pki/apiserver.key", 0o600)
	write("pki/apiserver.crt", 0o644)
	write("certs/tls.key", 0o640)
	write("logs/x.log", 0o644) // no secret
	if err := os.Chmod(filepath.Join(dir, "certs"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(dir, "logs"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o750); err != nil {
		t.Fatal(err)
	}
	loose, secrets, err := LooseFiles(dir, Secret)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		filepath.Join(dir, "certs") + " -rwxr-xr-x",
		dir + " -rwxr-x---",
		filepath.Join(dir, "certs", "tls.key") + " -rw-r-----",
		filepath.Join(dir, "pki", "apiserver.crt") + " -rw-r--r--",
	}
	if diff := cmp.Diff(want, loose); diff != "" {
		t.Errorf("LooseFiles (-want +got):\n%s", diff)
	}
	if secrets != 4 {
		t.Errorf("LooseFiles saw %d secrets, want 4", secrets)
	}
}
