package metricsserver

import (
	"testing"

	"github.com/ray-operator/ray-operator/internal/controlplane"
)

func TestVersionMatchesMakefile(t *testing.T) {
	got, err := controlplane.MakefileVersion("METRICS_SERVER_VERSION")
	if err != nil {
		t.Fatal(err)
	}
	if got != Version {
		t.Errorf("Makefile METRICS_SERVER_VERSION = %s, metricsserver has %s", got, Version)
	}
}

// TestAPIServiceNamesTheService: the APIService sends metrics.k8s.io to the
// Service's port, whose name the EndpointSlice's port carries, and trusts
// the serving certificate's CA.
func TestAPIServiceNamesTheService(t *testing.T) {
	obj := apiService([]byte("PEM")).Object
	spec := obj["spec"].(map[string]any)
	svc := spec["service"].(map[string]any)
	if svc["name"] != serviceName || svc["namespace"] != serviceNamespace || svc["port"] != int64(servicePort) {
		t.Errorf("APIService service = %v", svc)
	}
	if spec["caBundle"] != "UEVN" || spec["group"] != "metrics.k8s.io" || spec["version"] != "v1beta1" {
		t.Errorf("APIService spec = %v", spec)
	}
	port := service(4443).Spec.Ports[0]
	if port.Name != portName || port.Port != servicePort || port.TargetPort.IntValue() != 4443 {
		t.Errorf("Service port = %+v", port)
	}
}
