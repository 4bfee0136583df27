package controlplane

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/ray-operator/ray-operator/internal/testing/exposure"
)

// TestStateFilesAreTheOwnersOnly writes what Start writes before any
// component runs (the state directory, credentials, kubeconfigs) over an
// older state directory that others could read, and expects every key,
// token, certificate and kubeconfig to be 0600 and their directories 0700.
func TestStateFilesAreTheOwnersOnly(t *testing.T) {
	for name, n := range map[string]*NodeNetwork{"without a network": nil, "with a network": testNetwork()} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			writeLoose(t, dir, "pki/apiserver.key", "pki/tokens.csv", "kubeconfig")
			if err := prepareStateDir(dir); err != nil {
				t.Fatal(err)
			}
			creds, err := (&ControlPlane{}).writeCredentials(filepath.Join(dir, "pki"), n)
			if err != nil {
				t.Fatal(err)
			}
			for _, kubeconfig := range []string{"kubeconfig", "users/kubeconfig"} {
				if err := writeKubeconfig(filepath.Join(dir, kubeconfig), n.apiServerURL(6443), creds); err != nil {
					t.Fatal(err)
				}
			}
			loose, secrets, err := exposure.LooseFiles(dir, exposure.Secret)
			if err != nil {
				t.Fatal(err)
			}
			if len(loose) > 0 {
				t.Errorf("readable by others than the owner:\n%v", loose)
			}
			if secrets < 6 { // apiserver.crt and .key, sa.key, tokens.csv, two kubeconfigs
				t.Errorf("%d secret files, want at least 6", secrets)
			}
		})
	}
}

// writeLoose creates files, and the directories they are in, that everyone
// may read.
func writeLoose(t *testing.T, dir string, rels ...string) {
	t.Helper()
	for _, rel := range rels {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("old"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := errors.Join(os.Chmod(p, 0o644), os.Chmod(filepath.Dir(p), 0o755)); err != nil {
			t.Fatal(err)
		}
	}
}
