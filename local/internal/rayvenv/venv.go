package rayvenv

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// Venv is an installed Ray virtualenv.
type Venv struct {
	// Dir is its directory on the host.
	Dir string
	// Version is the Ray release it holds (X.Y.Z).
	Version string
	// Python is the Python it runs ("3.11"): the machine's, on which
	// every Ray virtualenv of the node is built.
	Python string
}

// Read finds what the virtualenv in dir runs: its site-packages directory
// names the Python, ray's dist-info the release.
func Read(dir string) (Venv, error) {
	infos, err := filepath.Glob(filepath.Join(dir, "lib", "python3.*", "site-packages", "ray-*.dist-info"))
	if err != nil {
		return Venv{}, err
	}
	if len(infos) != 1 {
		return Venv{}, fmt.Errorf("%s is no Ray virtualenv: found %d lib/python3.*/site-packages/ray-*.dist-info, want 1", dir, len(infos))
	}
	sitePackages := filepath.Dir(infos[0])
	python := strings.TrimPrefix(filepath.Base(filepath.Dir(sitePackages)), "python")
	version := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(infos[0]), "ray-"), ".dist-info")
	if version == "" || python == "" {
		return Venv{}, errors.New(dir + ": cannot tell its Ray release and Python")
	}
	return Venv{Dir: dir, Version: version, Python: python}, nil
}
