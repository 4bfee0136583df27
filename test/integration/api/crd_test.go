package api

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ray-operator/ray-operator/internal/testing/testenv"
)

// TestInstalledCRDs checks what kubectl and other tools see of each kind:
// names, the "all" category, the status subresource and KubeRay's printer
// columns.
func TestInstalledCRDs(t *testing.T) {
	env := testenv.Shared(t)
	type column struct {
		Name, Type, JSONPath string
		Priority             int32
	}
	cases := map[string]struct {
		kind, plural string
		columns      []column
	}{
		"rayclusters.ray.io": {kind: "RayCluster", plural: "rayclusters", columns: []column{
			{"desired workers", "integer", ".status.desiredWorkerReplicas", 0},
			{"available workers", "integer", ".status.availableWorkerReplicas", 0},
			{"cpus", "string", ".status.desiredCPU", 0},
			{"memory", "string", ".status.desiredMemory", 0},
			{"gpus", "string", ".status.desiredGPU", 0},
			{"tpus", "string", ".status.desiredTPU", 1},
			{"status", "string", ".status.state", 0},
			{"age", "date", ".metadata.creationTimestamp", 0},
			{"head pod IP", "string", ".status.head.podIP", 1},
			{"head service IP", "string", ".status.head.serviceIP", 1},
		}},
		"rayjobs.ray.io": {kind: "RayJob", plural: "rayjobs", columns: []column{
			{"job status", "string", ".status.jobStatus", 0},
			{"deployment status", "string", ".status.jobDeploymentStatus", 0},
			{"ray cluster name", "string", ".status.rayClusterName", 0},
			{"start time", "string", ".status.startTime", 0},
			{"end time", "string", ".status.endTime", 0},
			{"age", "date", ".metadata.creationTimestamp", 0},
		}},
		"rayservices.ray.io": {kind: "RayService", plural: "rayservices", columns: []column{
			{"service status", "string", ".status.serviceStatus", 0},
			{"num serve endpoints", "string", ".status.numServeEndpoints", 0},
		}},
		"raycronjobs.ray.io": {kind: "RayCronJob", plural: "raycronjobs", columns: []column{
			{"schedule", "string", ".spec.schedule", 0},
			{"timezone", "string", ".spec.timeZone", 0},
			{"last schedule", "string", ".status.lastScheduleTime", 0},
			{"age", "date", ".metadata.creationTimestamp", 0},
			{"suspend", "boolean", ".spec.suspend", 0},
		}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			crd := &apiextensionsv1.CustomResourceDefinition{}
			if err := env.Client.Get(t.Context(), client.ObjectKey{Name: name}, crd); err != nil {
				t.Fatalf("reading CRD: %v", err)
			}
			wantNames := apiextensionsv1.CustomResourceDefinitionNames{
				Plural: tc.plural, Singular: tc.plural[:len(tc.plural)-1],
				Kind: tc.kind, ListKind: tc.kind + "List", Categories: []string{"all"},
			}
			if diff := cmp.Diff(wantNames, crd.Spec.Names); diff != "" {
				t.Errorf("names (-want +got):\n%s", diff)
			}
			if crd.Spec.Group != "ray.io" || crd.Spec.Scope != apiextensionsv1.NamespaceScoped {
				t.Errorf("group/scope = %s/%s, want ray.io/Namespaced", crd.Spec.Group, crd.Spec.Scope)
			}
			if len(crd.Spec.Versions) != 1 {
				t.Fatalf("got %d versions, want only v1", len(crd.Spec.Versions))
			}
			v := crd.Spec.Versions[0]
			if v.Name != "v1" || !v.Served || !v.Storage {
				t.Errorf("version %s served=%v storage=%v, want v1 served and stored", v.Name, v.Served, v.Storage)
			}
			if v.Subresources == nil || v.Subresources.Status == nil || v.Subresources.Scale != nil {
				t.Errorf("subresources = %+v, want status only", v.Subresources)
			}
			var got []column
			for _, c := range v.AdditionalPrinterColumns {
				got = append(got, column{c.Name, c.Type, c.JSONPath, c.Priority})
			}
			if diff := cmp.Diff(tc.columns, got); diff != "" {
				t.Errorf("printer columns (-want +got):\n%s", diff)
			}
		})
	}
}
