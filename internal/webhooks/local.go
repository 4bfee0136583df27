package webhooks

import (
	"fmt"
	"os"
	"path/filepath"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"sigs.k8s.io/yaml"
)

// ManifestPath is the generated configuration under the repository root.
var ManifestPath = filepath.Join("config", "webhook", "manifests.yaml")

// LocalConfiguration reads the generated ValidatingWebhookConfiguration and
// points it at a webhook server reached by URL instead of through a Service:
// an operator running outside the cluster (make run, the envtest suites),
// where the API server cannot route to a Service. baseURL is like
// "https://localhost:9443"; name replaces the generated name, which the
// operator must be given as --webhook-configuration-name.
func LocalConfiguration(manifest, name, baseURL string) (*admissionregistrationv1.ValidatingWebhookConfiguration, error) {
	data, err := os.ReadFile(manifest)
	if err != nil {
		return nil, fmt.Errorf("reading the webhook configuration: %w", err)
	}
	cfg := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	if err := yaml.UnmarshalStrict(data, cfg); err != nil {
		return nil, fmt.Errorf("decoding %s: %w", manifest, err)
	}
	cfg.Name = name
	for i := range cfg.Webhooks {
		cc := &cfg.Webhooks[i].ClientConfig
		if cc.Service == nil || cc.Service.Path == nil {
			return nil, fmt.Errorf("%s: webhook %s has no service path", manifest, cfg.Webhooks[i].Name)
		}
		url := baseURL + *cc.Service.Path
		cc.URL, cc.Service = &url, nil
	}
	return cfg, nil
}
