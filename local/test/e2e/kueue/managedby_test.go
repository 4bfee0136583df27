package kueue_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/controlplane"
	"github.com/ray-operator/ray-operator/internal/testing/testenv"
	"github.com/ray-operator/ray-operator/local/internal/e2eutil"
	"github.com/ray-operator/ray-operator/local/internal/kueue"
)

// multiKueueYAML connects the test's ClusterQueue to a MultiKueue worker:
// the kubeconfig Secret (in Kueue's namespace), the MultiKueueCluster,
// the MultiKueueConfig and the AdmissionCheck of Kueue's MultiKueue
// controller, all named after the test's namespace.
const multiKueueYAML = `apiVersion: v1
kind: Secret
metadata:
  name: %[1]s
  namespace: %[2]s
stringData:
  kubeconfig: |
%[3]s
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: MultiKueueCluster
metadata:
  name: %[1]s
spec:
  clusterSource:
    kubeConfig:
      locationType: Secret
      location: %[1]s
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: MultiKueueConfig
metadata:
  name: %[1]s
spec:
  clusters: [%[1]s]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: AdmissionCheck
metadata:
  name: %[1]s
spec:
  controllerName: kueue.x-k8s.io/multikueue
  parameters:
    apiGroup: kueue.x-k8s.io
    kind: MultiKueueConfig
    name: %[1]s
`

// TestManagedByMultiKueueLeftAlone: a ClusterQueue whose AdmissionCheck is
// Kueue's MultiKueue, with a worker cluster (a second control plane with
// the Kueue and Ray CRDs; it runs no Kueue, so the test reserves quota
// for the Workload there as the worker's Kueue would). Kueue's webhook
// sets the queued RayJob's spec.managedBy to kueue.x-k8s.io/multikueue,
// MultiKueue copies its Workload and then the RayJob to the worker, marks
// the check Ready, and Kueue admits and unsuspends the RayJob on the
// manager. The operator leaves that RayJob alone, as KubeRay does: no
// RayCluster, no status of its own, while it runs an unqueued RayJob
// created afterwards.
func TestManagedByMultiKueueLeftAlone(t *testing.T) {
	worker := startWorker(t)
	ns := e2eutil.Namespace(t, shared.client, func(ctx context.Context, ns string) { shared.dump(ctx, t, ns) })
	shared.apply(t, fmt.Sprintf(multiKueueYAML, ns, kueue.Namespace, indent(workerKubeconfig(t, worker.RESTConfig), "    ")))
	q := queue{namespace: ns, clusterQueue: ns, localQueue: "queue"}
	shared.apply(t, fmt.Sprintf(clusterQueueYAML, ns, "1", fmt.Sprintf("  admissionChecksStrategy:\n    admissionChecks:\n    - name: %s\n", ns)))
	if err := worker.client.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	waitActive(t, ns)

	job := rayJob(q, "multikueue", quickEntrypoint)
	if err := shared.client.Create(t.Context(), job); err != nil {
		t.Fatalf("creating RayJob: %v", err)
	}
	if ptr.Deref(job.Spec.ManagedBy, "") != rayv1.MultiKueueController {
		t.Fatalf("Kueue's webhook set spec.managedBy %v, want %s", job.Spec.ManagedBy, rayv1.MultiKueueController)
	}
	wl := shared.waitWorkload(t, ns, "RayJob", job.Name, time.Minute, "holding quota", func(wl *unstructured.Unstructured) bool { return isTrue(wl, "QuotaReserved") })
	reserveOnWorker(t, worker.client, ns, wl.GetName())
	shared.waitWorkload(t, ns, "RayJob", job.Name, time.Minute, "Admitted", func(wl *unstructured.Unstructured) bool { return isTrue(wl, "Admitted") })
	remote := &rayv1.RayJob{}
	if err := worker.client.Get(t.Context(), client.ObjectKeyFromObject(job), remote); err != nil {
		t.Fatalf("MultiKueue did not copy the RayJob to the worker: %v", err)
	}
	if remote.Spec.ManagedBy != nil {
		t.Errorf("the worker's copy has spec.managedBy %q; MultiKueue hands it to the worker's operator", *remote.Spec.ManagedBy)
	}
	shared.waitRayJob(t, ns, job.Name, time.Minute, "unsuspended by Kueue", func(j *rayv1.RayJob) bool { return !j.Spec.Suspend })

	// The operator has seen the unsuspended RayJob once it runs one
	// created after it.
	control := rayJob(q, "control", quickEntrypoint)
	control.Labels, control.Spec.Suspend = nil, false
	if err := shared.client.Create(t.Context(), control); err != nil {
		t.Fatal(err)
	}
	shared.waitRayJob(t, ns, control.Name, time.Minute, "given a cluster", func(j *rayv1.RayJob) bool { return j.Status.RayClusterName != "" })
	got := &rayv1.RayJob{}
	if err := shared.client.Get(t.Context(), client.ObjectKeyFromObject(job), got); err != nil {
		t.Fatal(err)
	}
	clusters := &rayv1.RayClusterList{}
	if err := shared.client.List(t.Context(), clusters, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, c := range clusters.Items {
		if c.Name == got.Status.RayClusterName || len(c.OwnerReferences) > 0 && c.OwnerReferences[0].Name == job.Name {
			t.Errorf("the operator created RayCluster %s for a RayJob MultiKueue manages", c.Name)
		}
	}
	if got.Status.JobDeploymentStatus != "" || len(got.Finalizers) > 0 {
		t.Errorf("the operator touched a RayJob MultiKueue manages: status %+v, finalizers %v", got.Status, got.Finalizers)
	}
}

// workerCluster is the MultiKueue worker: a control plane with no nodes.
type workerCluster struct {
	*controlplane.ControlPlane
	client client.Client
}

// startWorker starts a second control plane with Kueue's CRDs (without
// their conversion webhooks: no Kueue serves them there) and the Ray CRDs,
// stopped when t ends.
func startWorker(t *testing.T) *workerCluster {
	t.Helper()
	dir, err := kueue.ModuleDir()
	if err != nil {
		t.Fatal(err)
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	root, err := controlplane.ModuleRoot(wd)
	if err != nil {
		t.Fatal(err)
	}
	cp, err := controlplane.Start(t.Context(), controlplane.Options{
		StateDir: t.TempDir(),
		CRDDirs:  []string{filepath.Join(dir, "config", "components", "crd", "bases"), filepath.Join(root, "config", "crd", "bases")},
	})
	if err != nil {
		t.Fatalf("starting the MultiKueue worker's control plane: %v", err)
	}
	t.Cleanup(func() { _ = cp.Stop() })
	scheme, err := testenv.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cp.RESTConfig, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return &workerCluster{ControlPlane: cp, client: c}
}

// workerKubeconfig is a kubeconfig with the worker's address, CA and
// token inline, as MultiKueue requires (no file paths).
func workerKubeconfig(t *testing.T, cfg *rest.Config) string {
	t.Helper()
	kc := clientcmdapi.NewConfig()
	kc.Clusters["worker"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["admin"] = &clientcmdapi.AuthInfo{Token: cfg.BearerToken}
	kc.Contexts["worker"] = &clientcmdapi.Context{Cluster: "worker", AuthInfo: "admin"}
	kc.CurrentContext = "worker"
	data, err := clientcmd.Write(*kc)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// waitActive waits until Kueue reports the MultiKueue AdmissionCheck named
// name Active: its worker is connected.
func waitActive(t *testing.T, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	ac := &unstructured.Unstructured{}
	ac.SetGroupVersionKind(workloadGVK.GroupVersion().WithKind("AdmissionCheck"))
	err := e2eutil.Poll(ctx, e2eutil.PollInterval, func() (bool, error) {
		if err := shared.client.Get(ctx, client.ObjectKey{Name: name}, ac); err != nil {
			return false, err
		}
		return isTrue(ac, "Active"), fmt.Errorf("status %v", ac.Object["status"])
	})
	if err != nil {
		t.Fatalf("the MultiKueue AdmissionCheck is not Active: %v", err)
	}
}

// reserveOnWorker does what the worker's Kueue would: it reserves quota
// for the copy of the Workload MultiKueue created there and admits it.
func reserveOnWorker(t *testing.T, c client.Client, ns, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	wl := &unstructured.Unstructured{}
	wl.SetGroupVersionKind(workloadGVK)
	err := e2eutil.Poll(ctx, e2eutil.PollInterval, func() (bool, error) {
		err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, wl)
		return err == nil, err
	})
	if err != nil {
		t.Fatalf("MultiKueue did not copy Workload %s to the worker: %v", name, err)
	}
	now := time.Now().UTC().Format(time.RFC3339)
	var assignments []any
	sets, _, _ := unstructured.NestedSlice(wl.Object, "spec", "podSets")
	for _, s := range sets {
		assignments = append(assignments, map[string]any{
			"name": s.(map[string]any)["name"], "count": int64(1),
			"flavors": map[string]any{"cpu": "worker", "memory": "worker"},
		})
	}
	status := map[string]any{
		"admission": map[string]any{"clusterQueue": "worker", "podSetAssignments": assignments},
		"conditions": []any{
			map[string]any{"type": "QuotaReserved", "status": "True", "reason": "QuotaReserved", "message": "reserved by the test as the worker's Kueue", "lastTransitionTime": now},
			map[string]any{"type": "Admitted", "status": "True", "reason": "Admitted", "message": "admitted by the test as the worker's Kueue", "lastTransitionTime": now},
		},
	}
	if err := unstructured.SetNestedField(wl.Object, status, "status"); err != nil {
		t.Fatal(err)
	}
	if err := c.Status().Update(ctx, wl); err != nil {
		t.Fatalf("reserving quota for Workload %s on the worker: %v", name, err)
	}
}

// indent prefixes every line of s, for a YAML block scalar.
func indent(s, prefix string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i := range lines {
		lines[i] = prefix + lines[i]
	}
	return strings.Join(lines, "\n")
}
