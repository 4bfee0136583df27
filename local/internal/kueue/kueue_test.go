package kueue

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/ray-operator/ray-operator/internal/controlplane"
)

func TestVersionMatchesMakefile(t *testing.T) {
	got, err := controlplane.MakefileVersion("KUEUE_VERSION")
	if err != nil {
		t.Fatal(err)
	}
	if got != Version {
		t.Errorf("Makefile KUEUE_VERSION = %s, kueue has %s", got, Version)
	}
}

// TestVersionMatchesToolModule: the manager is built from the Kueue
// version whose manifests this package installs.
func TestVersionMatchesToolModule(t *testing.T) {
	got, err := controlplane.HackModuleRequirement("kueue", "sigs.k8s.io/kueue")
	if err != nil {
		t.Fatal(err)
	}
	if got != Version {
		t.Errorf("hack/kueue/go.mod requires kueue %s, kueue has %s", got, Version)
	}
	root, err := controlplane.ModuleRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, "hack", "kueue", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^tool sigs\.k8s\.io/kueue/cmd/kueue$`).Match(data) {
		t.Error("hack/kueue/go.mod does not name sigs.k8s.io/kueue/cmd/kueue as a tool")
	}
}

func moduleDir(t *testing.T) string {
	t.Helper()
	dir, err := ModuleDir()
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestNamesMatchDefaultKustomization: the namespace and name prefix are
// those of Kueue's own installation.
func TestNamesMatchDefaultKustomization(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(moduleDir(t), "config", "default", "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var k struct {
		Namespace  string `json:"namespace"`
		NamePrefix string `json:"namePrefix"`
	}
	if err := yaml.Unmarshal(data, &k); err != nil {
		t.Fatal(err)
	}
	if k.Namespace != Namespace || k.NamePrefix != namePrefix {
		t.Errorf("config/default: namespace %q, namePrefix %q; kueue has %q, %q", k.Namespace, k.NamePrefix, Namespace, namePrefix)
	}
}

func TestReadManifestsCRDs(t *testing.T) {
	m, err := ReadManifests(moduleDir(t))
	if err != nil {
		t.Fatal(err)
	}
	var names, converted []string
	for _, crd := range m.CRDs {
		names = append(names, crd.Name)
		if c := crd.Spec.Conversion; c != nil && c.Webhook != nil {
			s := c.Webhook.ClientConfig.Service
			if s.Namespace != Namespace || s.Name != ServiceName || s.Path == nil || *s.Path != "/convert" {
				t.Errorf("CRD %s converts through %s/%s %v, want %s/%s /convert", crd.Name, s.Namespace, s.Name, s.Path, Namespace, ServiceName)
			}
			converted = append(converted, strings.TrimSuffix(crd.Name, ".kueue.x-k8s.io"))
		}
	}
	if len(names) != 11 || !slices.Contains(names, "workloads.kueue.x-k8s.io") {
		t.Errorf("CRDs = %v, want the 11 of config/components/crd", names)
	}
	// The CRDs whose CA Kueue's certificate rotator injects
	// (pkg/util/cert).
	slices.Sort(converted)
	want := []string{"clusterqueues", "cohorts", "localqueues", "multikueueclusters", "workloads"}
	if diff := cmp.Diff(want, converted); diff != "" {
		t.Errorf("CRDs with a conversion webhook (-want +got):\n%s", diff)
	}
}

func TestReadManifestsWebhooks(t *testing.T) {
	m, err := ReadManifests(moduleDir(t))
	if err != nil {
		t.Fatal(err)
	}
	if m.CertSecret.Namespace != Namespace || m.CertSecret.Name != SecretName {
		t.Errorf("certificate Secret %s/%s, want %s/%s", m.CertSecret.Namespace, m.CertSecret.Name, Namespace, SecretName)
	}
	// Kueue's rotator injects its CA into the configurations named after
	// the Service: <base>-{mutating,validating}-webhook-configuration.
	base := strings.TrimSuffix(ServiceName, "-webhook-service")
	if m.Mutating.Name != base+"-mutating-webhook-configuration" || m.Validating.Name != base+"-validating-webhook-configuration" {
		t.Errorf("webhook configurations %s, %s do not match the rotator's names", m.Mutating.Name, m.Validating.Name)
	}
	paths := map[string]*metav1.LabelSelector{}
	for _, w := range m.Mutating.Webhooks {
		if s := w.ClientConfig.Service; s == nil || s.Namespace != Namespace || s.Name != ServiceName {
			t.Errorf("webhook %s calls %+v, want Service %s/%s", w.Name, s, Namespace, ServiceName)
		}
		paths[*w.ClientConfig.Service.Path] = w.NamespaceSelector
	}
	for _, w := range m.Validating.Webhooks {
		paths[*w.ClientConfig.Service.Path] = w.NamespaceSelector
	}
	for _, p := range []string{"/mutate-ray-io-v1-rayjob", "/validate-ray-io-v1-raycluster", "/mutate-ray-io-v1-rayservice", "/validate-kueue-x-k8s-io-v1beta2-workload"} {
		if _, ok := paths[p]; !ok {
			t.Errorf("no webhook serves %s", p)
		}
	}
	// The kustomization's patches keep the Pod webhooks out of
	// kube-system and kueue-system.
	for _, p := range []string{"/mutate--v1-pod", "/validate--v1-pod"} {
		sel := paths[p]
		if sel == nil || len(sel.MatchExpressions) != 1 || !slices.Equal(sel.MatchExpressions[0].Values, []string{"kube-system", Namespace}) {
			t.Errorf("webhook %s namespaceSelector = %+v, want the kustomization's NotIn kube-system, %s", p, sel, Namespace)
		}
	}
}

func TestConfiguration(t *testing.T) {
	got := configuration("10.0.0.1", 9443, 8081, "/state/certs")
	data, err := yaml.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	want := `apiVersion: config.kueue.x-k8s.io/v1beta2
featureGates:
  VisibilityOnDemand: false
health:
  healthProbeBindAddress: 127.0.0.1:8081
integrations:
  frameworks:
  - ray.io/rayjob
  - ray.io/raycluster
  - ray.io/rayservice
  - batch/job
internalCertManagement:
  enable: true
  webhookSecretName: kueue-webhook-server-cert
  webhookServiceName: kueue-webhook-service
kind: Configuration
leaderElection:
  leaderElect: false
metrics:
  bindAddress: "0"
namespace: kueue-system
webhook:
  certDir: /state/certs
  host: 10.0.0.1
  port: 9443
`
	if diff := cmp.Diff(want, string(data)); diff != "" {
		t.Errorf("configuration (-want +got):\n%s", diff)
	}
}

// TestCertSyncWritesSecretKeys: every key of the Secret becomes a file,
// and a later version of the Secret replaces them.
func TestCertSyncWritesSecretKeys(t *testing.T) {
	c := &certSync{dir: t.TempDir()}
	for _, crt := range []string{"first", "second"} {
		c.write(&corev1.Secret{Data: map[string][]byte{"tls.crt": []byte(crt), "tls.key": []byte("key"), "ca.crt": []byte("ca")}})
		if err := c.err(); err != nil {
			t.Fatal(err)
		}
		for name, want := range map[string]string{"tls.crt": crt, "tls.key": "key", "ca.crt": "ca"} {
			got, err := os.ReadFile(filepath.Join(c.dir, name))
			if err != nil || string(got) != want {
				t.Errorf("%s = %q, %v; want %q", name, got, err, want)
			}
		}
	}
}

// A control plane whose API server cannot reach Kueue gets webhook
// configurations that list no webhook, and the same CRDs (the rotator
// injects its CA into all of them); the manifests shared with other
// clusters stay whole.
func TestManifestsWithoutWebhooks(t *testing.T) {
	m, err := ReadManifests(moduleDir(t))
	if err != nil {
		t.Fatal(err)
	}
	mutating, validating := len(m.Mutating.Webhooks), len(m.Validating.Webhooks)
	got := m.withoutWebhooks()
	if len(got.Mutating.Webhooks)+len(got.Validating.Webhooks) != 0 {
		t.Errorf("%d mutating and %d validating webhooks left", len(got.Mutating.Webhooks), len(got.Validating.Webhooks))
	}
	if got.Mutating.Name != m.Mutating.Name || got.Validating.Name != m.Validating.Name || len(got.CRDs) != len(m.CRDs) || got.CertSecret != m.CertSecret {
		t.Error("withoutWebhooks changed more than the webhook lists")
	}
	if len(m.Mutating.Webhooks) != mutating || len(m.Validating.Webhooks) != validating || mutating == 0 {
		t.Errorf("the original manifests lost webhooks: %d mutating, %d validating", len(m.Mutating.Webhooks), len(m.Validating.Webhooks))
	}
}
