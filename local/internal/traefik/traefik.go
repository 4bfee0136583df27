// Package traefik runs Traefik (github.com/traefik/traefik/v3, built from
// the module the Makefile pins in hack/traefik) as an addon of the local
// cluster: a Gateway API implementation, its kubernetesGateway provider
// programming Gateways of class GatewayClassName and their HTTPRoutes,
// weighted backends included, and writing their statuses. It runs on the
// host as a process: its entry point listens on the node's address at
// ListenerPort, the port of the Gateway a RayService's incremental upgrade
// creates, and it sends requests to the backends' Pod IPs (their
// EndpointSlices) through the node's bridge. The addon installs the
// standard-channel Gateway API CRDs of the gateway-api module the operator
// is built with, and the GatewayClass.
package traefik

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ray-operator/ray-operator/internal/controlplane"
	"github.com/ray-operator/ray-operator/internal/incrementalupgrade"
)

// EnvBinary names the Traefik executable.
const EnvBinary = "RAY_OPERATOR_TRAEFIK"

// Version is the Traefik release the Makefile builds (TRAEFIK_VERSION); a
// test keeps the two and hack/traefik/go.mod in step. v3.6.12 is the
// newest v3 whose dependencies the module proxy serves (v3.7's ACME DNS
// providers need SDK versions it refuses).
const Version = "v3.6.12"

// GatewayAPIVersion is the gateway-api module whose standard CRDs the
// addon installs: the one the operator is built with (a test compares it
// with the root go.mod).
const GatewayAPIVersion = "v1.6.3"

const gatewayAPIModule = "sigs.k8s.io/gateway-api"

// GatewayClassName is the GatewayClass the addon creates for Traefik; a
// RayService names it in
// spec.upgradeStrategy.clusterUpgradeOptions.gatewayClassName.
const GatewayClassName = "traefik"

// ControllerName is the controller name Traefik's kubernetesGateway
// provider accepts GatewayClasses for.
const ControllerName = "traefik.io/gateway-controller"

// ListenerPort is the port of Traefik's "web" entry point on the node's
// address. Traefik matches a Gateway listener to the entry point with the
// listener's port, so it is the port of the RayService's Gateway.
const ListenerPort = int(incrementalupgrade.ListenerPort)

// crdTimeout bounds the wait for the Gateway API CRDs to be established.
const crdTimeout = time.Minute

// Binary returns the Traefik executable: $RAY_OPERATOR_TRAEFIK, else the
// one the Makefile builds into $CACHE/tools/traefik-<Version>.
func Binary() (string, error) {
	return controlplane.ToolBinary(EnvBinary, "traefik-"+Version, "run `make tools` or set "+EnvBinary)
}

// CRDDir returns the standard-channel CRD directory of the gateway-api
// module at GatewayAPIVersion, downloading the module when it is not in
// the module cache yet (ray-local may run outside this repository).
func CRDDir() (string, error) {
	out, err := exec.Command("go", "mod", "download", "-json", gatewayAPIModule+"@"+GatewayAPIVersion).Output()
	if err != nil {
		return "", fmt.Errorf("downloading the %s@%s module: %w", gatewayAPIModule, GatewayAPIVersion, err)
	}
	var info struct{ Dir, Error string }
	if err := json.Unmarshal(out, &info); err != nil {
		return "", fmt.Errorf("reading go mod download's answer for %s@%s: %w", gatewayAPIModule, GatewayAPIVersion, err)
	}
	if info.Dir == "" {
		return "", fmt.Errorf("go mod download %s@%s: %s", gatewayAPIModule, GatewayAPIVersion, info.Error)
	}
	return filepath.Join(info.Dir, "config", "crd", "standard"), nil
}

// New returns the addon with the pinned Traefik (Binary) and the CRDs of
// the pinned gateway-api module (CRDDir).
func New() (*Traefik, error) {
	bin, err := Binary()
	if err != nil {
		return nil, err
	}
	dir, err := CRDDir()
	if err != nil {
		return nil, err
	}
	return &Traefik{Binary: bin, CRDDir: dir}, nil
}

// Traefik is the addon. Prepare installs the Gateway API CRDs and the
// GatewayClass; Start runs Traefik.
type Traefik struct {
	// Binary is the Traefik executable (Binary()).
	Binary string
	// CRDDir holds the Gateway API CRDs (CRDDir()).
	CRDDir string

	pingPort int
}

var _ controlplane.Addon = (*Traefik)(nil)

// Name implements controlplane.Addon.
func (*Traefik) Name() string { return "traefik" }

// Prepare implements controlplane.Addon: it installs the Gateway API CRDs
// and creates the GatewayClass. Traefik needs the node network: it reaches
// the backends at their Pod IPs and listens on the node's address.
func (t *Traefik) Prepare(ctx context.Context, host *controlplane.Host) error {
	if host.Network() == nil {
		return errors.New("the Traefik addon needs the node network: it listens on the node's address and reaches Pod IPs")
	}
	ports, err := controlplane.FreePorts(1)
	if err != nil {
		return err
	}
	t.pingPort = ports[0]
	if _, err := envtest.InstallCRDs(host.RESTConfig(), envtest.CRDInstallOptions{Paths: []string{t.CRDDir}, MaxTime: crdTimeout}); err != nil {
		return fmt.Errorf("installing the Gateway API CRDs: %w", err)
	}
	c, err := gatewayClient(host)
	if err != nil {
		return err
	}
	return host.WaitFor(ctx, "GatewayClass "+GatewayClassName, func(ctx context.Context) error {
		err := c.Create(ctx, GatewayClass())
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating GatewayClass %s: %w", GatewayClassName, err)
		}
		return nil
	})
}

// Start implements controlplane.Addon: it runs Traefik with the admin
// kubeconfig and waits until its ping answers and it has accepted the
// GatewayClass.
func (t *Traefik) Start(ctx context.Context, host *controlplane.Host) error {
	nodeIP := host.Network().NodeIP.String()
	env := []string{"KUBECONFIG=" + host.KubeconfigPath()}
	if err := host.RunEnv(t.Name(), t.Binary, Args(nodeIP, t.pingPort), env); err != nil {
		return err
	}
	httpClient := &http.Client{Timeout: time.Second}
	url := "http://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(t.pingPort)) + "/ping"
	if err := host.WaitFor(ctx, "Traefik "+url, func(ctx context.Context) error {
		return controlplane.Probe(ctx, httpClient, url)
	}); err != nil {
		return err
	}
	c, err := gatewayClient(host)
	if err != nil {
		return err
	}
	return host.WaitFor(ctx, "Traefik to accept GatewayClass "+GatewayClassName, func(ctx context.Context) error {
		gc := &gwv1.GatewayClass{}
		if err := c.Get(ctx, client.ObjectKey{Name: GatewayClassName}, gc); err != nil {
			return err
		}
		if !meta.IsStatusConditionTrue(gc.Status.Conditions, string(gwv1.GatewayClassConditionStatusAccepted)) {
			return fmt.Errorf("GatewayClass %s is not accepted yet: %v", GatewayClassName, gc.Status.Conditions)
		}
		return nil
	})
}

// Args are Traefik's flags: the "web" entry point on the node's address
// at ListenerPort; ping on its own entry point on the loopback; the
// kubernetesGateway provider, reporting the node's address in the
// Gateways' status; no update checks or usage reports.
func Args(nodeIP string, pingPort int) []string {
	return []string{
		"--entryPoints.web.address=" + net.JoinHostPort(nodeIP, strconv.Itoa(ListenerPort)),
		"--entryPoints.ping.address=" + net.JoinHostPort("127.0.0.1", strconv.Itoa(pingPort)),
		"--ping=true",
		"--ping.entryPoint=ping",
		"--providers.kubernetesGateway=true",
		"--providers.kubernetesGateway.statusAddress.ip=" + nodeIP,
		"--global.checkNewVersion=false",
		"--global.sendAnonymousUsage=false",
		"--log.level=INFO",
	}
}

// GatewayClass is the class whose Gateways Traefik programs.
func GatewayClass() *gwv1.GatewayClass {
	return &gwv1.GatewayClass{
		ObjectMeta: metav1.ObjectMeta{Name: GatewayClassName},
		Spec:       gwv1.GatewayClassSpec{ControllerName: ControllerName},
	}
}

func gatewayClient(host *controlplane.Host) (client.Client, error) {
	scheme := runtime.NewScheme()
	if err := gwv1.Install(scheme); err != nil {
		return nil, err
	}
	c, err := client.New(host.RESTConfig(), client.Options{Scheme: scheme})
	if err != nil {
		return nil, fmt.Errorf("creating a client for the Gateway API: %w", err)
	}
	return c, nil
}
