// Package kueue runs Kueue's controller manager (sigs.k8s.io/kueue, built
// from the module the Makefile pins in hack/kueue) as an addon of the local
// cluster, with Kueue's CRDs and webhook configurations from that module's
// config/components. Kueue manages its own webhook certificates (its
// internal certificate rotator writes them and injects their CA into the
// webhook configurations and CRDs); the API server reaches its webhook
// server, which listens on the node's address, through a selector-less
// Service, as it reaches metrics-server.
package kueue

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/ray-operator/ray-operator/internal/controlplane"
)

// EnvBinary names the Kueue manager executable.
const EnvBinary = "RAY_OPERATOR_KUEUE"

// Version is the Kueue release the Makefile builds (KUEUE_VERSION); a test
// keeps the two and hack/kueue/go.mod in step.
const Version = "v0.17.0"

// module is Kueue's Go module, whose config/components holds its manifests.
const module = "sigs.k8s.io/kueue"

// Frameworks are the integrations the local Kueue manages: KubeRay's kinds,
// and batch Jobs as in Kueue's default configuration. Without "batch/job",
// Kueue v0.17.0's stand-in webhook for Jobs panics on every Job (its queue
// manager is nil) and the API server refuses the Job, the RayJob's
// submitter among them. Jobs without the queue label, such as the
// submitters, stay outside Kueue.
var Frameworks = []string{"ray.io/rayjob", "ray.io/raycluster", "ray.io/rayservice", "batch/job"}

// Binary returns the manager executable: $RAY_OPERATOR_KUEUE, else the one
// the Makefile builds into $CACHE/tools/kueue-<Version>.
func Binary() (string, error) {
	return controlplane.ToolBinary(EnvBinary, "kueue-"+Version, "run `make tools` or set "+EnvBinary)
}

// ModuleDir returns Kueue's module directory in the module cache,
// downloading the module when it is not there yet (no module of the
// repository requires it: hack/kueue builds it as a tool).
func ModuleDir() (string, error) {
	out, err := exec.Command("go", "mod", "download", "-json", module+"@"+Version).Output()
	if err != nil {
		return "", fmt.Errorf("downloading the %s@%s module: %w", module, Version, err)
	}
	var info struct{ Dir, Error string }
	if err := json.Unmarshal(out, &info); err != nil {
		return "", fmt.Errorf("reading go mod download's answer for %s@%s: %w", module, Version, err)
	}
	if info.Dir == "" {
		return "", fmt.Errorf("go mod download %s@%s: %s", module, Version, info.Error)
	}
	return info.Dir, nil
}

// New returns the addon with the pinned manager (Binary) and the manifests
// of the pinned module (ReadManifests of ModuleDir).
func New() (*Kueue, error) {
	bin, err := Binary()
	if err != nil {
		return nil, err
	}
	dir, err := ModuleDir()
	if err != nil {
		return nil, err
	}
	manifests, err := ReadManifests(dir)
	if err != nil {
		return nil, err
	}
	return &Kueue{Binary: bin, Manifests: manifests}, nil
}

// Kueue is the addon. Prepare installs its manifests and writes its
// Configuration; Start runs the manager.
type Kueue struct {
	// Binary is the manager executable (Binary()).
	Binary string
	// Manifests are Kueue's CRDs and webhook configurations
	// (ReadManifests).
	Manifests *Manifests

	webhookPort, healthPort int
	configPath              string
	certs                   *certSync
}

var _ controlplane.Addon = (*Kueue)(nil)

// Name implements controlplane.Addon.
func (*Kueue) Name() string { return "kueue" }

// Prepare implements controlplane.Addon: it picks the webhook and health
// ports, writes the Configuration, and creates Kueue's namespace, webhook
// Service, CRDs and webhook configurations. On a control plane without a
// node network the API server has no route to a webhook server on the
// host (it calls a Service's endpoints, which must be a node's address):
// there Kueue serves no webhooks, its webhook configurations list none and
// it has no Service. Such a Kueue still runs its controllers (quota,
// admission, MultiKueue), but whoever creates a job sets what its
// webhooks would default: spec.suspend, and spec.managedBy for MultiKueue.
func (k *Kueue) Prepare(ctx context.Context, host *controlplane.Host) error {
	ports, err := controlplane.FreePorts(2)
	if err != nil {
		return err
	}
	k.webhookPort, k.healthPort = ports[0], ports[1]
	dir := filepath.Join(host.StateDir(), "kueue")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	k.certs = &certSync{dir: filepath.Join(dir, "certs")}
	webhookHost, manifests := "127.0.0.1", k.Manifests.withoutWebhooks()
	if n := host.Network(); n != nil {
		webhookHost, manifests = n.NodeIP.String(), k.Manifests
	}
	data, err := yaml.Marshal(configuration(webhookHost, k.webhookPort, k.healthPort, k.certs.dir))
	if err != nil {
		return err
	}
	k.configPath = filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(k.configPath, data, 0o600); err != nil {
		return fmt.Errorf("writing the Kueue configuration: %w", err)
	}
	return install(ctx, host, manifests, k.webhookPort)
}

// Start implements controlplane.Addon: it keeps Kueue's certificate
// directory in step with its Secret (certSync) until the control plane
// stops, runs the manager with the admin kubeconfig and waits until it is
// ready, which Kueue reports once its certificates are issued, their CA
// injected and its webhook server serving.
func (k *Kueue) Start(ctx context.Context, host *controlplane.Host) error {
	clientset, err := kubernetes.NewForConfig(host.RESTConfig())
	if err != nil {
		return fmt.Errorf("creating a client for Kueue's certificate Secret: %w", err)
	}
	syncCtx, stopSync := context.WithCancel(context.Background())
	host.AtStop(func() error { stopSync(); return nil })
	if err := k.certs.start(syncCtx, clientset); err != nil {
		return err
	}
	args := []string{"--config=" + k.configPath, "--kubeconfig=" + host.KubeconfigPath()}
	if err := host.Run(k.Name(), k.Binary, args); err != nil {
		return err
	}
	client := &http.Client{Timeout: time.Second}
	url := "http://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(k.healthPort)) + "/readyz"
	return host.WaitFor(ctx, "Kueue "+url, func(ctx context.Context) error {
		if err := k.certs.err(); err != nil {
			return err
		}
		return controlplane.Probe(ctx, client, url)
	})
}

// configuration is Kueue's Configuration (config.kueue.x-k8s.io/v1beta2):
// the webhook server on the node's address, where the Service's
// EndpointSlice points; internal certificate management for the Service's
// name; no leader election, metrics endpoint or visibility API server (an
// aggregated API this cluster does not register); the Ray integrations.
func configuration(webhookHost string, webhookPort, healthPort int, certDir string) map[string]any {
	return map[string]any{
		"apiVersion": "config.kueue.x-k8s.io/v1beta2",
		"kind":       "Configuration",
		"namespace":  Namespace,
		"health":     map[string]any{"healthProbeBindAddress": net.JoinHostPort("127.0.0.1", strconv.Itoa(healthPort))},
		"metrics":    map[string]any{"bindAddress": "0"},
		"webhook":    map[string]any{"host": webhookHost, "port": webhookPort, "certDir": certDir},
		"leaderElection": map[string]any{
			"leaderElect": false,
		},
		"internalCertManagement": map[string]any{
			"enable": true, "webhookServiceName": ServiceName, "webhookSecretName": SecretName,
		},
		"featureGates": map[string]any{"VisibilityOnDemand": false},
		"integrations": map[string]any{"frameworks": Frameworks},
	}
}
