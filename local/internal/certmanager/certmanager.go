// Package certmanager runs cert-manager's certificate and issuer controllers
// as an addon of the local cluster, built from the cert-manager module the
// Makefile pins (hack/cert-manager-controller): no webhook, no cainjector,
// SelfSigned and CA issuers only. Its CRDs come from that module's
// deploy/crds.
package certmanager

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/ray-operator/ray-operator/internal/controlplane"
)

// EnvBinary names the cert-manager controller executable.
const EnvBinary = "RAY_OPERATOR_CERT_MANAGER"

// Version is the cert-manager release the Makefile builds
// (CERT_MANAGER_VERSION); a test keeps the two in step.
const Version = "v1.21.2"

// module is cert-manager's Go module, whose deploy/crds holds its CRDs.
const module = "github.com/cert-manager/cert-manager"

// Binary returns the controller executable: $RAY_OPERATOR_CERT_MANAGER, else
// the one the Makefile builds into $CACHE/tools/cert-manager-controller-<Version>.
func Binary() (string, error) {
	return controlplane.ToolBinary(EnvBinary, "cert-manager-controller-"+Version, "run `make tools` or set "+EnvBinary)
}

// CRDFiles returns cert-manager's CRD manifests from the module cache.
func CRDFiles() ([]string, error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", module+"@"+Version).Output()
	if err != nil {
		return nil, fmt.Errorf("locating the %s module: %w", module, err)
	}
	dir := strings.TrimSpace(string(out))
	if dir == "" {
		return nil, fmt.Errorf("module %s@%s is not in the module cache; run go mod download %s@%s", module, Version, module, Version)
	}
	files, err := filepath.Glob(filepath.Join(dir, "deploy", "crds", "*.yaml"))
	if err != nil {
		return nil, err
	}
	var crds []string
	for _, f := range files {
		data, err := os.ReadFile(f) //nolint:gosec // a file of the module cache
		if err != nil {
			return nil, err
		}
		if strings.Contains(string(data), "kind: CustomResourceDefinition") {
			crds = append(crds, f)
		}
	}
	if len(crds) == 0 {
		return nil, fmt.Errorf("no CRDs in %s", filepath.Join(dir, "deploy", "crds"))
	}
	return crds, nil
}

// CertManager is the addon.
type CertManager struct {
	// Binary is the controller executable (Binary()).
	Binary string
}

var _ controlplane.Addon = (*CertManager)(nil)

// Name implements controlplane.Addon.
func (*CertManager) Name() string { return "cert-manager" }

// Prepare implements controlplane.Addon: cert-manager serves no API of its
// own without its webhook.
func (*CertManager) Prepare(context.Context, *controlplane.Host) error { return nil }

// Start implements controlplane.Addon: it runs the controller with the admin
// kubeconfig. Its informers wait for the CRDs, which the control plane
// installs meanwhile.
func (c *CertManager) Start(_ context.Context, host *controlplane.Host) error {
	return host.Run(c.Name(), c.Binary, []string{"--kubeconfig=" + host.KubeconfigPath()})
}
