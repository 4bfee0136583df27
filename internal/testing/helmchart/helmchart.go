// Package helmchart runs the pinned Helm binary on the chart in
// helm-chart/ray-operator, for tests: rendering, linting, installing into a
// test API server.
package helmchart

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ray-operator/ray-operator/internal/controlplane"
	"github.com/ray-operator/ray-operator/internal/testing/installcheck"
	"github.com/ray-operator/ray-operator/internal/testing/testenv"
)

const (
	// HelmVersion is the Helm release the Makefile installs (HELM_VERSION);
	// a test keeps the two in step.
	HelmVersion = "v3.22.0"
	// EnvHelm names the helm executable; the Makefile sets it.
	EnvHelm = "RAY_OPERATOR_HELM"
)

// The release docs/install.md installs (helm install kuberay-operator
// --namespace ray-system).
const (
	// ReleaseName is its name; the chart's defaults give the operator's
	// Deployment and ServiceAccount the same.
	ReleaseName = "kuberay-operator"
	// ReleaseNamespace is its namespace.
	ReleaseNamespace = "ray-system"
)

// Operator is the identity the chart's defaults run the operator as: the
// ServiceAccount ReleaseName in ReleaseNamespace.
func Operator() installcheck.Identity {
	return installcheck.Identity{Namespace: ReleaseNamespace, ServiceAccount: ReleaseName}
}

// Binary returns the helm executable: $RAY_OPERATOR_HELM, else the one the
// Makefile installs into $CACHE/tools/helm-<HelmVersion>.
func Binary() (string, error) {
	path := os.Getenv(EnvHelm)
	if path == "" {
		cache, err := controlplane.CacheDir()
		if err != nil {
			return "", err
		}
		path = filepath.Join(cache, "tools", "helm-"+HelmVersion)
	}
	info, err := os.Stat(path)
	if err != nil || !info.Mode().IsRegular() || info.Mode().Perm()&0o111 == 0 {
		return "", fmt.Errorf("helm not found at %s (run `make helm` or set %s): %v", path, EnvHelm, err)
	}
	return path, nil
}

// Dir is the chart's directory.
func Dir(t testing.TB) string {
	t.Helper()
	return filepath.Join(installcheck.ModuleRoot(t), "helm-chart", "ray-operator")
}

// Helm runs helm with args in a Helm home of its own (no repositories,
// plugins or registry logins of the user) and returns its standard output;
// the error carries the standard error.
func Helm(t testing.TB, args ...string) (string, error) {
	t.Helper()
	return HelmContext(t.Context(), t, args...)
}

// HelmContext is Helm under ctx instead of the test's context, which is
// done by the time the test's cleanup runs.
func HelmContext(ctx context.Context, t testing.TB, args ...string) (string, error) {
	t.Helper()
	bin, err := Binary()
	if err != nil {
		t.Fatal(err)
	}
	home, err := os.MkdirTemp("", "helm-home-")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = os.RemoveAll(home) }()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(),
		"HELM_CACHE_HOME="+filepath.Join(home, "cache"),
		"HELM_CONFIG_HOME="+filepath.Join(home, "config"),
		"HELM_DATA_HOME="+filepath.Join(home, "data"),
	)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("helm %s: %w\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String(), nil
}

// Release is a release of the chart: its name, namespace and values.
type Release struct {
	Name      string
	Namespace string
	// ValuesFiles are passed with -f, in order.
	ValuesFiles []string
	// Set are key=value pairs passed with --set, after the files.
	Set []string
}

// Args are the command-line arguments naming r's chart, namespace and
// values, after the release name.
func (r Release) Args(chart string) []string {
	args := []string{r.Name, chart, "--namespace", r.Namespace}
	for _, f := range r.ValuesFiles {
		args = append(args, "--values", f)
	}
	for _, s := range r.Set {
		args = append(args, "--set", s)
	}
	return args
}

// Template renders the chart for r with `helm template`.
func Template(t testing.TB, r Release) (string, error) {
	t.Helper()
	return Helm(t, append([]string{"template"}, r.Args(Dir(t))...)...)
}

// Parse decodes a multi-document manifest into objects, skipping empty
// documents.
func Parse(t testing.TB, manifest string) []*unstructured.Unstructured {
	t.Helper()
	objs, err := testenv.DecodeObjects([]byte(manifest))
	if err != nil {
		t.Fatalf("decoding the rendered chart: %v", err)
	}
	return objs
}

// Manifest parses the manifest helm installed for the release name of
// namespace, on the API server of kubeconfig.
func Manifest(t testing.TB, kubeconfig, name, namespace string) []*unstructured.Unstructured {
	t.Helper()
	manifest, err := Helm(t, "get", "manifest", name, "--namespace", namespace, "--kubeconfig", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	return Parse(t, manifest)
}

// Kubeconfig writes kubeconfig to a file for helm's --kubeconfig and
// returns its path.
func Kubeconfig(t testing.TB, kubeconfig []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, kubeconfig, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// Install runs `helm <verb> <release> <chart>` (install or upgrade) against
// the API server of kubeconfig, creating the release namespace, and fails
// the test when helm fails.
func Install(t testing.TB, verb, kubeconfig, chart string, r Release) {
	t.Helper()
	args := append([]string{verb}, r.Args(chart)...)
	args = append(args, "--kubeconfig", kubeconfig)
	if verb == "install" {
		args = append(args, "--create-namespace")
	}
	if out, err := Helm(t, args...); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
}
