package traefik

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	"github.com/ray-operator/ray-operator/internal/controlplane"
)

func TestVersionMatchesMakefile(t *testing.T) {
	got, err := controlplane.MakefileVersion("TRAEFIK_VERSION")
	if err != nil {
		t.Fatal(err)
	}
	if got != Version {
		t.Errorf("Makefile TRAEFIK_VERSION = %s, traefik has %s", got, Version)
	}
}

// TestVersionMatchesToolModule: the Makefile builds the Traefik this
// package names, as a tool of hack/traefik.
func TestVersionMatchesToolModule(t *testing.T) {
	got, err := controlplane.HackModuleRequirement("traefik", "github.com/traefik/traefik/v3")
	if err != nil {
		t.Fatal(err)
	}
	if got != Version {
		t.Errorf("hack/traefik/go.mod requires traefik %s, traefik has %s", got, Version)
	}
	data := readRootFile(t, "hack", "traefik", "go.mod")
	if !regexp.MustCompile(`(?m)^tool github\.com/traefik/traefik/v3/cmd/traefik$`).Match(data) {
		t.Error("hack/traefik/go.mod does not name github.com/traefik/traefik/v3/cmd/traefik as a tool")
	}
}

// TestGatewayAPIVersionMatchesOperator: the CRDs installed are those of
// the gateway-api module the operator is built with.
func TestGatewayAPIVersionMatchesOperator(t *testing.T) {
	m := regexp.MustCompile(`(?m)^\s*sigs\.k8s\.io/gateway-api (v\S+)`).FindSubmatch(readRootFile(t, "go.mod"))
	if m == nil {
		t.Fatal("go.mod does not require sigs.k8s.io/gateway-api")
	}
	if got := string(m[1]); got != GatewayAPIVersion {
		t.Errorf("go.mod requires gateway-api %s, traefik installs the CRDs of %s", got, GatewayAPIVersion)
	}
}

// TestArgs: the web entry point is on the node's address at the port of
// the RayService's Gateway listener (80), which is how Traefik matches a
// listener to an entry point; ping stays on the loopback; the Gateways'
// status carries the node's address.
func TestArgs(t *testing.T) {
	args := Args("10.88.0.1", 4321)
	for _, want := range []string{
		"--entryPoints.web.address=10.88.0.1:80",
		"--entryPoints.ping.address=127.0.0.1:4321",
		"--ping.entryPoint=ping",
		"--providers.kubernetesGateway=true",
		"--providers.kubernetesGateway.statusAddress.ip=10.88.0.1",
	} {
		if !slices.Contains(args, want) {
			t.Errorf("Args lack %q: %q", want, args)
		}
	}
}

func TestGatewayClass(t *testing.T) {
	gc := GatewayClass()
	if gc.Name != GatewayClassName || gc.Spec.ControllerName != "traefik.io/gateway-controller" {
		t.Errorf("GatewayClass = %s with controller %s", gc.Name, gc.Spec.ControllerName)
	}
}

func readRootFile(t *testing.T, elem ...string) []byte {
	t.Helper()
	root, err := controlplane.ModuleRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(append([]string{root}, elem...)...))
	if err != nil {
		t.Fatal(err)
	}
	return data
}
