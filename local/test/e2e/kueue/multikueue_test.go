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

// multiKueueYAML connects the manager's ClusterQueue to the worker: the
// kubeconfig Secret (in Kueue's namespace), the MultiKueueCluster, the
// MultiKueueConfig and the AdmissionCheck of Kueue's MultiKueue
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

// admissionChecks is clusterQueueYAML's extra spec for a ClusterQueue
// whose Workloads need the AdmissionCheck named name.
func admissionChecks(name string) string {
	return fmt.Sprintf("  admissionChecksStrategy:\n    admissionChecks:\n    - name: %s\n", name)
}

// prebuiltWorkloadLabel names the Workload a job copied to a MultiKueue
// worker runs under (sigs.k8s.io/kueue/pkg/controller/constants).
const prebuiltWorkloadLabel = "kueue.x-k8s.io/prebuilt-workload-name"

// TestMultiKueueRunsRayJobOnWorker: MultiKueue with a manager and a worker
// cluster, each running Kueue and the operator. The manager is a second
// control plane (no node; its Kueue has its controllers but no webhooks,
// its API server having no route to them, so the test sets on the RayJob
// what Kueue's webhook would: suspend and spec.managedBy
// kueue.x-k8s.io/multikueue, which Kueue's webhook is shown to set on the
// local cluster). The worker is the local cluster. MultiKueue copies the
// Workload to the worker, where the worker's Kueue admits it under the
// worker's ClusterQueue; MultiKueue then copies the RayJob there (without
// managedBy, under that Workload), the worker's operator runs it with real
// Ray to SUCCEEDED, and MultiKueue copies that status back to the
// manager's RayJob. The manager's operator leaves its RayJob alone (no
// RayCluster, no finalizer) while it serves an unqueued RayJob created
// afterwards.
func TestMultiKueueRunsRayJobOnWorker(t *testing.T) {
	t.Parallel() // waits for real Ray jobs: see the package comment
	began := time.Now()
	manager := startManager(t)
	q := shared.newQueue(t, "1", "")
	ns := q.namespace
	checkManagedByDefaulted(t, q)
	if err := manager.client.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Log("on the manager:")
			dump(context.Background(), t, manager.client, ns)
		}
	})
	create(t, manager.client, fmt.Sprintf(multiKueueYAML, ns, kueue.Namespace, indent(kubeconfig(t, shared.Cluster.RESTConfig()), "    ")))
	create(t, manager.client, fmt.Sprintf(clusterQueueYAML, ns, "1", admissionChecks(ns)))
	waitActive(t, manager.client, ns)
	t.Logf("manager with Kueue and the operator, connected to the worker, in %v", time.Since(began).Round(time.Second))

	job := rayJob(q, "multikueue", quickEntrypoint)
	job.Spec.ManagedBy = ptr.To(rayv1.MultiKueueController)
	if err := manager.client.Create(t.Context(), job); err != nil {
		t.Fatalf("creating the RayJob on the manager: %v", err)
	}
	submitted := time.Now()
	wl := waitWorkloadIn(t, manager.client, ns, "RayJob", job.Name, "created on the manager", func(*unstructured.Unstructured) bool { return true })
	checkAdmittedOnWorker(t, q, wl.GetName())
	checkWorkerCopy(t, ns, job.Name, wl.GetName())

	got := waitRayJobIn(t, manager.client, ns, job.Name, jobTimeout+time.Minute, "SUCCEEDED as MultiKueue reports it", succeeded)
	t.Logf("the manager's RayJob reports SUCCEEDED %v after its creation", time.Since(submitted).Round(time.Second))
	if got.Spec.Suspend {
		t.Error("the manager's Kueue did not unsuspend its admitted RayJob")
	}
	waitWorkloadIn(t, manager.client, ns, "RayJob", job.Name, "Finished", func(wl *unstructured.Unstructured) bool { return isTrue(wl, "Finished") })
	checkLeftAlone(t, manager.client, q, job.Name)
}

// managerCluster is MultiKueue's manager: a control plane with no node,
// running Kueue and the operator.
type managerCluster struct {
	*controlplane.ControlPlane
	client client.Client
}

// startManager starts a control plane with the Ray CRDs and the Kueue
// addon (without a node network: no webhooks) and an operator against it,
// all stopped when t ends.
func startManager(t *testing.T) *managerCluster {
	t.Helper()
	k, err := kueue.New()
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
	dir := t.TempDir()
	cp, err := controlplane.Start(t.Context(), controlplane.Options{
		StateDir: dir,
		CRDDirs:  []string{filepath.Join(root, "config", "crd", "bases")},
		Addons:   []controlplane.Addon{k},
	})
	if err != nil {
		t.Fatalf("starting the MultiKueue manager's control plane: %v", err)
	}
	t.Cleanup(func() { _ = cp.Stop() })
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	if err := e2eutil.RunOperator(ctx, cp.RESTConfig, filepath.Join(dir, "operator.log"), done); err != nil {
		stop()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("the manager's operator: %v", err)
		}
	})
	scheme, err := testenv.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cp.RESTConfig, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return &managerCluster{ControlPlane: cp, client: c}
}

// checkManagedByDefaulted: on the local cluster, whose Kueue serves its
// webhooks, a RayJob queued to a ClusterQueue with a MultiKueue
// AdmissionCheck gets spec.managedBy kueue.x-k8s.io/multikueue from
// Kueue's webhook (asked with dry-run creates until Kueue's caches know
// the queue).
func checkManagedByDefaulted(t *testing.T, q queue) {
	t.Helper()
	name := q.namespace + "-mk"
	shared.apply(t, fmt.Sprintf(`apiVersion: kueue.x-k8s.io/v1beta2
kind: AdmissionCheck
metadata:
  name: %[1]s
spec:
  controllerName: kueue.x-k8s.io/multikueue
  parameters:
    apiGroup: kueue.x-k8s.io
    kind: MultiKueueConfig
    name: %[1]s
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata:
  name: %[1]s
spec:
  namespaceSelector: {}
  admissionChecksStrategy:
    admissionChecks:
    - name: %[1]s
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata:
  name: mk
  namespace: %[2]s
spec:
  clusterQueue: %[1]s
`, name, q.namespace))
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	err := e2eutil.Poll(ctx, e2eutil.PollInterval, func() (bool, error) {
		job := rayJob(queue{namespace: q.namespace, localQueue: "mk"}, "dry-run", quickEntrypoint)
		if err := shared.Client.Create(ctx, job, client.DryRunAll); err != nil {
			return false, err
		}
		return ptr.Deref(job.Spec.ManagedBy, "") == rayv1.MultiKueueController, fmt.Errorf("spec.managedBy %v", job.Spec.ManagedBy)
	})
	if err != nil {
		t.Errorf("Kueue's webhook does not set spec.managedBy %s: %v", rayv1.MultiKueueController, err)
	}
}

// checkAdmittedOnWorker waits until the worker's Kueue admits the copy of
// the Workload named name under the worker's ClusterQueue.
func checkAdmittedOnWorker(t *testing.T, q queue, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	wl := &unstructured.Unstructured{}
	wl.SetGroupVersionKind(workloadGVK)
	err := e2eutil.Poll(ctx, e2eutil.PollInterval, func() (bool, error) {
		if err := shared.Client.Get(ctx, client.ObjectKey{Namespace: q.namespace, Name: name}, wl); err != nil {
			return false, err
		}
		cq, _, _ := unstructured.NestedString(wl.Object, "status", "admission", "clusterQueue")
		return isTrue(wl, "Admitted") && cq == q.clusterQueue, fmt.Errorf("ClusterQueue %q, status %v", cq, wl.Object["status"])
	})
	if err != nil {
		t.Fatalf("the worker's Kueue did not admit Workload %s: %v", name, err)
	}
}

// checkWorkerCopy waits for MultiKueue's copy of the RayJob on the worker:
// no managedBy (the worker's operator runs it) and the copied Workload as
// its prebuilt one.
func checkWorkerCopy(t *testing.T, ns, name, workload string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	remote := &rayv1.RayJob{}
	err := e2eutil.Poll(ctx, e2eutil.PollInterval, func() (bool, error) {
		err := shared.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, remote)
		return err == nil, err
	})
	if err != nil {
		t.Fatalf("MultiKueue did not copy the RayJob to the worker: %v", err)
	}
	if remote.Spec.ManagedBy != nil || remote.Labels[prebuiltWorkloadLabel] != workload {
		t.Errorf("the worker's copy has spec.managedBy %v and %s=%q; want none and %s", remote.Spec.ManagedBy, prebuiltWorkloadLabel, remote.Labels[prebuiltWorkloadLabel], workload)
	}
}

// checkLeftAlone checks that the manager's operator, which runs an
// unqueued RayJob created now, did nothing to RayJob name: no RayCluster
// of it and no finalizer on it.
func checkLeftAlone(t *testing.T, c client.Client, q queue, name string) {
	t.Helper()
	control := rayJob(q, "control", quickEntrypoint)
	control.Labels, control.Spec.Suspend = nil, false
	if err := c.Create(t.Context(), control); err != nil {
		t.Fatal(err)
	}
	control = waitRayJobIn(t, c, q.namespace, control.Name, time.Minute, "given a cluster", func(j *rayv1.RayJob) bool { return j.Status.RayClusterName != "" })
	got := &rayv1.RayJob{}
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: q.namespace, Name: name}, got); err != nil {
		t.Fatal(err)
	}
	clusters := &rayv1.RayClusterList{}
	if err := c.List(t.Context(), clusters, client.InNamespace(q.namespace)); err != nil {
		t.Fatal(err)
	}
	for _, rc := range clusters.Items {
		if rc.Name != control.Status.RayClusterName {
			t.Errorf("the manager's operator created RayCluster %s (owners %v) besides the control RayJob's", rc.Name, rc.OwnerReferences)
		}
	}
	if len(got.Finalizers) > 0 {
		t.Errorf("the manager's operator put finalizers %v on a RayJob MultiKueue manages", got.Finalizers)
	}
}

// waitWorkloadIn polls the Workload of kind/name in c's cluster until cond
// holds.
func waitWorkloadIn(t *testing.T, c client.Client, ns, kind, name, what string, cond func(*unstructured.Unstructured) bool) *unstructured.Unstructured {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	var wl *unstructured.Unstructured
	err := e2eutil.Poll(ctx, e2eutil.PollInterval, func() (bool, error) {
		var err error
		if wl, err = workloadOf(ctx, c, ns, kind, name); err != nil || wl == nil {
			return false, fmt.Errorf("no Workload yet (%v)", err)
		}
		return cond(wl), fmt.Errorf("status %v", wl.Object["status"])
	})
	if err != nil {
		t.Fatalf("the Workload of %s %s is not %s: %v", kind, name, what, err)
	}
	return wl
}

// waitRayJobIn polls the RayJob in c's cluster until cond holds.
func waitRayJobIn(t *testing.T, c client.Client, ns, name string, timeout time.Duration, what string, cond func(*rayv1.RayJob) bool) *rayv1.RayJob {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), timeout)
	defer cancel()
	job := &rayv1.RayJob{}
	err := e2eutil.Poll(ctx, e2eutil.PollInterval, func() (bool, error) {
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, job); err != nil {
			return false, err
		}
		st := job.Status
		return cond(job), fmt.Errorf("suspend %v, deployment %q, job %q, message %q", job.Spec.Suspend, st.JobDeploymentStatus, st.JobStatus, st.Message)
	})
	if err != nil {
		t.Fatalf("RayJob %s is not %s: %v", name, what, err)
	}
	return job
}

// kubeconfig is a kubeconfig with cfg's address, CA and token inline, as
// MultiKueue requires (no file paths).
func kubeconfig(t *testing.T, cfg *rest.Config) string {
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

// waitActive waits until Kueue on c's cluster reports the MultiKueue
// AdmissionCheck named name Active: its worker is connected.
func waitActive(t *testing.T, c client.Client, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	ac := &unstructured.Unstructured{}
	ac.SetGroupVersionKind(workloadGVK.GroupVersion().WithKind("AdmissionCheck"))
	err := e2eutil.Poll(ctx, e2eutil.PollInterval, func() (bool, error) {
		if err := c.Get(ctx, client.ObjectKey{Name: name}, ac); err != nil {
			return false, err
		}
		return isTrue(ac, "Active"), fmt.Errorf("status %v", ac.Object["status"])
	})
	if err != nil {
		t.Fatalf("the MultiKueue AdmissionCheck is not Active: %v", err)
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
