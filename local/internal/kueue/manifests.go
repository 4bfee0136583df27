package kueue

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// Names that config/default/kustomization.yaml gives Kueue's objects: its
// namespace and the prefix of every name (a test reads them there).
const (
	// Namespace is where Kueue keeps its webhook Service and certificate
	// Secret (its Configuration's namespace).
	Namespace  = "kueue-system"
	namePrefix = "kueue-"
)

// Names of the webhook objects: the Service the API server calls and the
// Secret Kueue's certificate rotator keeps its certificates in. The
// rotator derives the webhook configurations' names from the Service's.
const (
	ServiceName = namePrefix + "webhook-service"
	SecretName  = namePrefix + "webhook-server-cert"
)

// Manifests are the objects Kueue's kustomization installs that the local
// cluster needs: its CRDs (conversion webhooks included) and its webhook
// configurations, named and pointed at the webhook Service as
// config/default builds them. CA bundles are Kueue's to inject.
type Manifests struct {
	CRDs       []*apiextensionsv1.CustomResourceDefinition
	Mutating   *admissionregistrationv1.MutatingWebhookConfiguration
	Validating *admissionregistrationv1.ValidatingWebhookConfiguration
	// CertSecret is the empty Secret Kueue's certificate rotator fills
	// (config/components/internalcert): the rotator updates it, and does
	// not create it.
	CertSecret *corev1.Secret
}

// kustomization is the part of a kustomization.yaml that
// config/components/crd and config/components/webhook use.
type kustomization struct {
	Resources []string `json:"resources"`
	Patches   []struct {
		Path  string `json:"path"`
		Patch string `json:"patch"`
	} `json:"patches"`
}

// ReadManifests reads the manifests from Kueue's module directory.
func ReadManifests(moduleDir string) (*Manifests, error) {
	crds, err := readCRDs(filepath.Join(moduleDir, "config", "components", "crd"))
	if err != nil {
		return nil, err
	}
	m := &Manifests{CRDs: crds}
	if m.Mutating, m.Validating, err = readWebhooks(filepath.Join(moduleDir, "config", "components", "webhook")); err != nil {
		return nil, err
	}
	if m.CertSecret, err = readCertSecret(filepath.Join(moduleDir, "config", "components", "internalcert")); err != nil {
		return nil, err
	}
	return m, nil
}

// readCertSecret reads the Secret of the kustomization, named and placed
// as config/default does.
func readCertSecret(dir string) (*corev1.Secret, error) {
	k, err := readKustomization(dir)
	if err != nil {
		return nil, err
	}
	if len(k.Resources) != 1 {
		return nil, fmt.Errorf("%s/kustomization.yaml lists %v, want the certificate Secret alone", dir, k.Resources)
	}
	secret := &corev1.Secret{}
	if err := readYAML(filepath.Join(dir, k.Resources[0]), secret); err != nil {
		return nil, err
	}
	secret.Name, secret.Namespace = namePrefix+secret.Name, Namespace
	if secret.Name != SecretName {
		return nil, fmt.Errorf("the certificate Secret of %s is %s, want %s", dir, secret.Name, SecretName)
	}
	return secret, nil
}

func readKustomization(dir string) (*kustomization, error) {
	data, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml")) //nolint:gosec // a file of the module cache
	if err != nil {
		return nil, err
	}
	k := &kustomization{}
	if err := yaml.Unmarshal(data, k); err != nil {
		return nil, fmt.Errorf("parsing %s/kustomization.yaml: %w", dir, err)
	}
	return k, nil
}

// readCRDs reads the CRDs the kustomization lists and applies its
// patches, each of which turns on a CRD's conversion webhook.
func readCRDs(dir string) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	k, err := readKustomization(dir)
	if err != nil {
		return nil, err
	}
	byName := map[string]*apiextensionsv1.CustomResourceDefinition{}
	crds := make([]*apiextensionsv1.CustomResourceDefinition, 0, len(k.Resources))
	for _, res := range k.Resources {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := readYAML(filepath.Join(dir, res), crd); err != nil {
			return nil, err
		}
		byName[crd.Name] = crd
		crds = append(crds, crd)
	}
	for _, p := range k.Patches {
		patch := &apiextensionsv1.CustomResourceDefinition{}
		if err := readYAML(filepath.Join(dir, p.Path), patch); err != nil {
			return nil, err
		}
		if err := applyConversionPatch(byName[patch.Name], patch); err != nil {
			return nil, fmt.Errorf("%s: %w", p.Path, err)
		}
	}
	return crds, nil
}

// applyConversionPatch sets the conversion of patch on crd, calling the
// webhook Service.
func applyConversionPatch(crd, patch *apiextensionsv1.CustomResourceDefinition) error {
	if crd == nil {
		return fmt.Errorf("patches CRD %s, which the kustomization does not list", patch.Name)
	}
	c := patch.Spec.Conversion
	if c == nil || c.Webhook == nil || c.Webhook.ClientConfig == nil || c.Webhook.ClientConfig.Service == nil {
		return fmt.Errorf("the patch of CRD %s sets no conversion webhook Service", patch.Name)
	}
	c.Webhook.ClientConfig.Service.Namespace = Namespace
	c.Webhook.ClientConfig.Service.Name = namePrefix + c.Webhook.ClientConfig.Service.Name
	crd.Spec.Conversion = c
	return nil
}

// webhookPatch is what config/components/webhook's patches change: the
// namespaces some webhooks skip. Parsed strictly, so that a patch of any
// other field fails here rather than being ignored.
type webhookPatch struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Webhooks []struct {
		Name              string                `json:"name"`
		NamespaceSelector *metav1.LabelSelector `json:"namespaceSelector"`
	} `json:"webhooks"`
}

// readWebhooks reads manifests.yaml (one mutating and one validating
// configuration) and applies the kustomization's patches and names.
func readWebhooks(dir string) (*admissionregistrationv1.MutatingWebhookConfiguration, *admissionregistrationv1.ValidatingWebhookConfiguration, error) {
	k, err := readKustomization(dir)
	if err != nil {
		return nil, nil, err
	}
	mutating, validating, err := readWebhookConfigurations(filepath.Join(dir, "manifests.yaml"))
	if err != nil {
		return nil, nil, err
	}
	selectors := map[string]*metav1.LabelSelector{} // by kind and webhook name
	for _, p := range k.Patches {
		wp := &webhookPatch{}
		if err := yaml.UnmarshalStrict([]byte(p.Patch), wp); err != nil {
			return nil, nil, fmt.Errorf("a patch of %s/kustomization.yaml changes more than namespaceSelectors: %w", dir, err)
		}
		for _, w := range wp.Webhooks {
			selectors[wp.Kind+"/"+w.Name] = w.NamespaceSelector
		}
	}
	mutating.Name = namePrefix + mutating.Name
	for i := range mutating.Webhooks {
		w := &mutating.Webhooks[i]
		pointAtService(&w.ClientConfig)
		if s, ok := selectors["MutatingWebhookConfiguration/"+w.Name]; ok {
			w.NamespaceSelector = s
		}
	}
	validating.Name = namePrefix + validating.Name
	for i := range validating.Webhooks {
		w := &validating.Webhooks[i]
		pointAtService(&w.ClientConfig)
		if s, ok := selectors["ValidatingWebhookConfiguration/"+w.Name]; ok {
			w.NamespaceSelector = s
		}
	}
	return mutating, validating, nil
}

func pointAtService(c *admissionregistrationv1.WebhookClientConfig) {
	if c.Service != nil {
		c.Service.Namespace = Namespace
		c.Service.Name = ServiceName
	}
}

// readWebhookConfigurations reads the two documents of manifests.yaml.
func readWebhookConfigurations(path string) (*admissionregistrationv1.MutatingWebhookConfiguration, *admissionregistrationv1.ValidatingWebhookConfiguration, error) {
	data, err := os.ReadFile(path) //nolint:gosec // a file of the module cache
	if err != nil {
		return nil, nil, err
	}
	var mutating *admissionregistrationv1.MutatingWebhookConfiguration
	var validating *admissionregistrationv1.ValidatingWebhookConfiguration
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, nil, fmt.Errorf("reading %s: %w", path, err)
		}
		meta := &metav1.TypeMeta{}
		if err := yaml.Unmarshal(doc, meta); err != nil {
			return nil, nil, fmt.Errorf("reading %s: %w", path, err)
		}
		switch meta.Kind {
		case "MutatingWebhookConfiguration":
			mutating = &admissionregistrationv1.MutatingWebhookConfiguration{}
			err = yaml.Unmarshal(doc, mutating)
		case "ValidatingWebhookConfiguration":
			validating = &admissionregistrationv1.ValidatingWebhookConfiguration{}
			err = yaml.Unmarshal(doc, validating)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("reading %s: %w", path, err)
		}
	}
	if mutating == nil || validating == nil {
		return nil, nil, fmt.Errorf("%s lacks a mutating or a validating webhook configuration", path)
	}
	return mutating, validating, nil
}

func readYAML(path string, into any) error {
	data, err := os.ReadFile(path) //nolint:gosec // a file of the module cache
	if err != nil {
		return err
	}
	if err := yaml.Unmarshal(data, into); err != nil {
		return fmt.Errorf("parsing %s: %w", path, err)
	}
	return nil
}

// withoutWebhooks is m with webhook configurations that list no webhook,
// for a control plane whose API server cannot reach Kueue's webhook
// server. The configurations and the CRDs' conversion webhooks stay:
// Kueue's certificate rotator injects its CA into each of them before
// Kueue reports ready. Nothing calls the conversion webhooks while every
// client reads Kueue's objects at the version they are stored in.
func (m *Manifests) withoutWebhooks() *Manifests {
	out := *m
	out.Mutating, out.Validating = m.Mutating.DeepCopy(), m.Validating.DeepCopy()
	out.Mutating.Webhooks, out.Validating.Webhooks = nil, nil
	return &out
}
