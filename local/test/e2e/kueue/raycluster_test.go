package kueue_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/local/internal/e2eutil"
)

// TestRayClusterWaitsForAdmission: a RayCluster with the queue label, as
// Kueue documents it, is suspended by Kueue's webhook and stays so, with
// no Pods and the operator reporting it suspended, while its ClusterQueue
// has no quota. Once the quota is raised Kueue admits it, and the operator
// brings the cluster up with real Ray to ready.
func TestRayClusterWaitsForAdmission(t *testing.T) {
	q := shared.newQueue(t, "0", "")
	cluster := &rayv1.RayCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "queued", Namespace: q.namespace, Labels: map[string]string{queueLabel: q.localQueue}},
		Spec:       *rayClusterSpec(),
	}
	if err := shared.Client.Create(t.Context(), cluster); err != nil {
		t.Fatalf("creating RayCluster: %v", err)
	}
	if cluster.Spec.Suspend == nil || !*cluster.Spec.Suspend {
		t.Fatal("Kueue's webhook did not suspend the queued RayCluster")
	}
	shared.waitWorkload(t, q.namespace, "RayCluster", cluster.Name, time.Minute, "pending for quota", func(wl *unstructured.Unstructured) bool {
		c := condition(wl, "QuotaReserved")
		return c != nil && c.Status == "False"
	})
	waitCluster(t, q.namespace, cluster.Name, time.Minute, "suspended", func(c *rayv1.RayCluster) bool { return c.Status.State == rayv1.Suspended })
	pods := &corev1.PodList{}
	if err := shared.Client.List(t.Context(), pods, client.InNamespace(q.namespace)); err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) != 0 {
		t.Errorf("%d Pods of a RayCluster Kueue has not admitted", len(pods.Items))
	}

	raiseQuota(t, q.clusterQueue, "1")
	shared.waitWorkload(t, q.namespace, "RayCluster", cluster.Name, time.Minute, "Admitted", func(wl *unstructured.Unstructured) bool { return isTrue(wl, "Admitted") })
	ready := waitCluster(t, q.namespace, cluster.Name, jobTimeout, "ready", func(c *rayv1.RayCluster) bool { return c.Status.State == rayv1.Ready })
	if ready.Spec.Suspend != nil && *ready.Spec.Suspend {
		t.Error("an admitted RayCluster is still suspended")
	}
}

// raiseQuota sets the CPU quota of the ClusterQueue's only flavor.
func raiseQuota(t *testing.T, clusterQueue, cpu string) {
	t.Helper()
	cq := &unstructured.Unstructured{}
	cq.SetGroupVersionKind(workloadGVK.GroupVersion().WithKind("ClusterQueue"))
	cq.SetName(clusterQueue)
	patch := fmt.Sprintf(`[{"op":"replace","path":"/spec/resourceGroups/0/flavors/0/resources/0/nominalQuota","value":%q}]`, cpu)
	if err := shared.Client.Patch(t.Context(), cq, client.RawPatch(types.JSONPatchType, []byte(patch))); err != nil {
		t.Fatalf("raising the quota of ClusterQueue %s: %v", clusterQueue, err)
	}
}

// waitCluster polls the RayCluster until cond holds and returns it.
func waitCluster(t *testing.T, ns, name string, timeout time.Duration, what string, cond func(*rayv1.RayCluster) bool) *rayv1.RayCluster {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), timeout)
	defer cancel()
	c := &rayv1.RayCluster{}
	err := e2eutil.Poll(ctx, e2eutil.PollInterval, func() (bool, error) {
		if err := shared.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, c); err != nil {
			return false, err
		}
		return cond(c), fmt.Errorf("suspend %v, state %q, conditions %v", c.Spec.Suspend, c.Status.State, c.Status.Conditions)
	})
	if err != nil {
		t.Fatalf("RayCluster %s is not %s: %v", name, what, err)
	}
	return c
}
