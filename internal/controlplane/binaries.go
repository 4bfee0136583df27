package controlplane

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// Environment variables that override where the control-plane binaries are
// looked up. CI and the Makefile set them so that no lookup logic runs.
const (
	// EnvK8sBinDir names a directory holding etcd, kube-apiserver,
	// kube-scheduler, kube-controller-manager and kubectl.
	EnvK8sBinDir = "RAY_OPERATOR_K8S_BIN"
	// EnvKwokBinary names the kwok executable.
	EnvKwokBinary = "RAY_OPERATOR_KWOK"
	// EnvKwokStages names a directory whose *.yaml files hold kwok Stage
	// objects. Unset, the stages shipped in kwok's module are used.
	EnvKwokStages = "RAY_OPERATOR_KWOK_STAGES"
	// EnvCache overrides the cache directory (the Makefile's CACHE).
	EnvCache = "RAY_OPERATOR_CACHE"
)

// KwokVersion is the kwok release the Makefile installs (KWOK_VERSION); a
// test keeps the two in step.
const KwokVersion = "v0.8.0"

// Hints appended to "binary not found" errors.
const (
	// BinaryHint says how to get the binaries of BinDir.
	BinaryHint = "run `make k8s-binaries` or set " + EnvK8sBinDir
	kwokHint   = "run `make tools` or set " + EnvKwokBinary
)

// Binary names inside the bin directory.
const (
	binEtcd              = "etcd"
	binAPIServer         = "kube-apiserver"
	binScheduler         = "kube-scheduler"
	binControllerManager = "kube-controller-manager"
	binKubectl           = "kubectl"
)

// ModuleRoot walks up from dir to the directory holding this project's
// go.mod (module github.com/ray-operator/ray-operator).
func ModuleRoot(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("resolving %q: %w", dir, err)
	}
	for {
		if isProjectRoot(dir) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod of module github.com/ray-operator/ray-operator above the working directory")
		}
		dir = parent
	}
}

// isProjectRoot reports whether dir holds this project's go.mod.
func isProjectRoot(dir string) bool {
	data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return false
	}
	line, _, _ := strings.Cut(string(data), "\n")
	return strings.TrimSpace(line) == "module github.com/ray-operator/ray-operator"
}

// MakefileVersion returns the default the repository's Makefile gives a
// pinned version variable ("KWOK_VERSION ?= v0.8.0"), found from the working
// directory's module root; the tests that keep Go constants in step with
// the Makefile use it.
func MakefileVersion(variable string) (string, error) {
	root, err := ModuleRoot(".")
	if err != nil {
		return "", err
	}
	makefile, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		return "", err
	}
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(variable) + ` \?= (\S+)$`).FindSubmatch(makefile)
	if m == nil {
		return "", fmt.Errorf("the Makefile has no %s", variable)
	}
	return string(m[1]), nil
}

// HackModuleRequirement returns the version of module that the go.mod of
// hack/<dir> (a module that builds a pinned third-party program) requires.
func HackModuleRequirement(dir, module string) (string, error) {
	root, err := ModuleRoot(".")
	if err != nil {
		return "", err
	}
	gomod, err := os.ReadFile(filepath.Join(root, "hack", dir, "go.mod"))
	if err != nil {
		return "", err
	}
	m := regexp.MustCompile(`(?m)^\s*` + regexp.QuoteMeta(module) + ` (v\S+)`).FindSubmatch(gomod)
	if m == nil {
		return "", fmt.Errorf("hack/%s/go.mod does not require %s", dir, module)
	}
	return string(m[1]), nil
}

// CacheDir returns the project's cache directory, computed as the Makefile
// and hack/k8s-binaries.sh do: $RAY_OPERATOR_CACHE, else
// $XDG_CACHE_HOME/ray-operator, else ~/.cache/ray-operator.
func CacheDir() (string, error) {
	if dir := os.Getenv(EnvCache); dir != "" {
		return dir, nil
	}
	if dir := os.Getenv("XDG_CACHE_HOME"); dir != "" {
		return filepath.Join(dir, "ray-operator"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("locating the cache directory: %w", err)
	}
	return filepath.Join(home, ".cache", "ray-operator"), nil
}

// BinDir returns the directory holding the control-plane binaries:
// $RAY_OPERATOR_K8S_BIN, else the directory hack/k8s-binaries.sh builds into
// (versions read from hack/k8s/go.mod and hack/etcd/go.mod of the module
// containing the working directory). It fails with a hint when kube-apiserver
// or etcd is missing there.
func BinDir() (string, error) {
	dir := os.Getenv(EnvK8sBinDir)
	if dir == "" {
		var err error
		if dir, err = defaultBinDir(); err != nil {
			return "", err
		}
	}
	for _, name := range []string{binEtcd, binAPIServer} {
		if err := CheckExecutable(filepath.Join(dir, name), BinaryHint); err != nil {
			return "", err
		}
	}
	return dir, nil
}

// defaultBinDir computes $CACHE/k8s-<k8s version>-etcd-<etcd version>.
func defaultBinDir() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("getting the working directory: %w", err)
	}
	root, err := ModuleRoot(wd)
	if err != nil {
		return "", fmt.Errorf("locating control-plane binaries (%s): %w", BinaryHint, err)
	}
	k8s, err := requiredVersion(filepath.Join(root, "hack", "k8s", "go.mod"), "k8s.io/kubernetes")
	if err != nil {
		return "", err
	}
	etcd, err := requiredVersion(filepath.Join(root, "hack", "etcd", "go.mod"), "go.etcd.io/etcd/server/v3")
	if err != nil {
		return "", err
	}
	cache, err := CacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(cache, "k8s-"+k8s+"-etcd-"+etcd), nil
}

// requiredVersion returns the version of a one-line `require module version`
// directive in a go.mod file, the form the hack wrapper modules use.
func requiredVersion(goMod, module string) (string, error) {
	f, err := os.Open(goMod)
	if err != nil {
		return "", fmt.Errorf("reading pinned versions: %w", err)
	}
	defer func() { _ = f.Close() }()
	scanner := bufio.NewScanner(f)
	for scanner.Scan() {
		fields := strings.Fields(scanner.Text())
		if len(fields) == 3 && fields[0] == "require" && fields[1] == module {
			return fields[2], nil
		}
	}
	if err := scanner.Err(); err != nil {
		return "", fmt.Errorf("reading %s: %w", goMod, err)
	}
	return "", fmt.Errorf("%s has no `require %s <version>` line", goMod, module)
}

// KwokBinary returns the kwok executable: $RAY_OPERATOR_KWOK, else the one
// the Makefile installs into $CACHE/tools/kwok-<KwokVersion>.
func KwokBinary() (string, error) {
	return ToolBinary(EnvKwokBinary, "kwok-"+KwokVersion, kwokHint)
}

// ToolBinary returns the executable named by environment variable env, else
// $CACHE/tools/<name> (where the Makefile installs its tools); hint tells
// how to get it.
func ToolBinary(env, name, hint string) (string, error) {
	path := os.Getenv(env)
	if path == "" {
		cache, err := CacheDir()
		if err != nil {
			return "", err
		}
		path = filepath.Join(cache, "tools", name)
	}
	if err := CheckExecutable(path, hint); err != nil {
		return "", err
	}
	return path, nil
}

// CheckExecutable fails unless path is an executable regular file; hint
// tells how to get it.
func CheckExecutable(path, hint string) error {
	info, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("%s not found (%s)", path, hint)
		}
		return fmt.Errorf("checking %s: %w", path, err)
	}
	if !info.Mode().IsRegular() || info.Mode().Perm()&0o111 == 0 {
		return fmt.Errorf("%s is not an executable file (%s)", path, hint)
	}
	return nil
}
