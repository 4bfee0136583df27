package install_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ray-operator/ray-operator/internal/testing/helmchart"
)

// The chart's webhook objects (webhook.enabled) for the release's
// fullname.
var (
	webhookConfiguration = helmchart.ReleaseName + "-validating-webhook-configuration"
	webhookService       = helmchart.ReleaseName + "-webhook-service"
)

// tooLongName is a valid DNS-1035 label the API server stores, but longer
// than the 53 characters a RayCluster's name may have (its Services' names
// add suffixes): a rule only the webhook enforces, not the CRD's schema.
var tooLongName = "raycluster-" + strings.Repeat("x", 50)

// invalidRayCluster is a RayCluster manifest named tooLongName.
var invalidRayCluster = `apiVersion: ray.io/v1
kind: RayCluster
metadata:
  name: ` + tooLongName + `
spec:
  headGroupSpec:
    rayStartParams: {}
    template:
      spec:
        containers:
        - name: ray-head
          image: rayproject/ray:2.60.0
`

func testWebhook(t *testing.T, _ *run) {
	requireWebhookThroughService(t)
	requireInvalidRefused(t)
}

// requireInvalidRefused applies the invalid RayCluster with kubectl and
// checks the webhook refused it.
func requireInvalidRefused(t *testing.T) {
	t.Helper()
	ns := shared.namespace(t)
	file := filepath.Join(t.TempDir(), "raycluster.yaml")
	if err := os.WriteFile(file, []byte(invalidRayCluster), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := shared.Kubectl(t.Context(), "apply", "-n", ns, "-f", file)
	if err == nil {
		t.Fatalf("kubectl apply of a RayCluster named %q (%d characters) succeeded: %s", tooLongName, len(tooLongName), out)
	}
	for _, want := range []string{"metadata.name", webhookNameMessage} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("kubectl apply failed without %q: %v", want, err)
		}
	}
	t.Logf("kubectl apply refused: %v", err)
	requireRefusedByWebhook(t, ns)
}

// webhookNameMessage is the webhook's word for a RayCluster name that is
// too long (internal/validation's).
const webhookNameMessage = "RayCluster name should be no more than 53 characters"

// requireRefusedByWebhook checks, in the audit log, that the API server
// answered the create of the invalid RayCluster with vraycluster.kb.io's
// refusal (kubectl prints the causes, not which webhook gave them).
func requireRefusedByWebhook(t *testing.T, ns string) {
	t.Helper()
	events := shared.audit(t)
	const denied = `admission webhook "vraycluster.kb.io" denied the request`
	for _, e := range events {
		if e.Verb == "create" && e.ResourcePath() == "rayclusters" && e.Namespace() == ns && e.ObjectRef.Name == tooLongName && e.ResponseStatus != nil {
			if e.ResponseStatus.Code != http.StatusUnprocessableEntity || !strings.Contains(e.ResponseStatus.Message, denied) {
				t.Errorf("the create of RayCluster %s was answered %d %q, want %d with %q", tooLongName, e.ResponseStatus.Code, e.ResponseStatus.Message, http.StatusUnprocessableEntity, denied)
			}
			return
		}
	}
	t.Errorf("the audit log shows no create of RayCluster %s/%s", ns, tooLongName)
}

// requireWebhookThroughService checks that the webhook configuration
// sends RayClusters to the chart's Service, whose endpoints are the
// operator's Pods, with the CA the operator wrote.
func requireWebhookThroughService(t *testing.T) {
	t.Helper()
	vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	if err := shared.Client.Get(t.Context(), client.ObjectKey{Name: webhookConfiguration}, vwc); err != nil {
		t.Fatal(err)
	}
	for _, w := range vwc.Webhooks {
		svc := w.ClientConfig.Service
		if svc == nil || svc.Name != webhookService || svc.Namespace != helmchart.ReleaseNamespace {
			t.Errorf("webhook %s is served by %+v, want Service %s/%s", w.Name, svc, helmchart.ReleaseNamespace, webhookService)
		}
		if len(w.ClientConfig.CABundle) == 0 {
			t.Errorf("webhook %s has no caBundle", w.Name)
		}
	}
	pods := shared.operatorPods(t, 1)
	slices := &discoveryv1.EndpointSliceList{}
	if err := shared.Client.List(t.Context(), slices, client.InNamespace(helmchart.ReleaseNamespace), client.MatchingLabels{discoveryv1.LabelServiceName: webhookService}); err != nil {
		t.Fatal(err)
	}
	for _, s := range slices.Items {
		for _, e := range s.Endpoints {
			if len(e.Addresses) > 0 && e.Addresses[0] == pods[0].Status.PodIP {
				return
			}
		}
	}
	t.Errorf("Service %s has no endpoint at the operator Pod's %s: %+v", webhookService, pods[0].Status.PodIP, slices.Items)
}
