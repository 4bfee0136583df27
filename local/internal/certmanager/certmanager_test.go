package certmanager

import (
	"path/filepath"
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
	got, err := controlplane.HackModuleRequirement("cert-manager-controller", "github.com/cert-manager/cert-manager")
	if err != nil {
		t.Fatal(err)
	}
	if got != Version {
		t.Errorf("hack/cert-manager-controller/go.mod requires cert-manager %s, certmanager has %s", got, Version)
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
