package certmanager

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/ray-operator/ray-operator/internal/controlplane"
)

func TestVersionMatchesMakefile(t *testing.T) {
	got, err := controlplane.MakefileVersion("CERT_MANAGER_VERSION")
	if err != nil {
		t.Fatal(err)
	}
	if got != Version {
		t.Errorf("Makefile CERT_MANAGER_VERSION = %s, certmanager has %s", got, Version)
	}
}

// TestVersionMatchesControllerModule: the controller is built from the
// cert-manager version this package installs the CRDs of.
func TestVersionMatchesControllerModule(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	root, err := controlplane.ModuleRoot(wd)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, "hack", "cert-manager-controller", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^\s*github\.com/cert-manager/cert-manager (v\S+)`).FindSubmatch(data)
	if m == nil || string(m[1]) != Version {
		t.Errorf("hack/cert-manager-controller/go.mod requires cert-manager %q, certmanager has %s", m, Version)
	}
}

func TestCRDFiles(t *testing.T) {
	files, err := CRDFiles()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range files {
		names = append(names, filepath.Base(f))
	}
	want := "cert-manager.io_certificates.yaml"
	found := false
	for _, n := range names {
		found = found || n == want
	}
	if !found || len(files) != 6 {
		t.Errorf("CRD files = %v, want the 6 of deploy/crds with %s", names, want)
	}
}
