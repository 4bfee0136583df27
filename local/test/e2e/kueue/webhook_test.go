package kueue_test

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// TestKueueWebhooks: Kueue's own webhooks answer the API server, with the
// certificates Kueue issued itself. Its mutating webhook suspends a queued
// RayJob created unsuspended, its validating webhook refuses one that
// would keep its cluster, its job controller creates the RayJob's
// Workload, and its conversion webhook serves that Workload at v1beta1.
// With no quota the Workload waits, and the operator starts nothing.
func TestKueueWebhooks(t *testing.T) {
	q := shared.newQueue(t, "0", "")
	job := rayJob(q, "unsuspended", quickEntrypoint)
	job.Spec.Suspend = false
	if err := shared.Client.Create(t.Context(), job); err != nil {
		t.Fatalf("creating RayJob: %v", err)
	}
	if !job.Spec.Suspend {
		t.Error("Kueue's webhook did not suspend the queued RayJob")
	}

	keeper := rayJob(q, "keeps-cluster", quickEntrypoint)
	keeper.Spec.ShutdownAfterJobFinishes = false
	err := shared.Client.Create(t.Context(), keeper)
	if err == nil || !strings.Contains(err.Error(), "a kueue managed job should delete the cluster after finishing") {
		t.Errorf("creating a queued RayJob that keeps its cluster: %v, want Kueue's refusal", err)
	}

	wl := shared.waitWorkload(t, q.namespace, "RayJob", job.Name, time.Minute, "pending for quota", func(wl *unstructured.Unstructured) bool {
		c := condition(wl, "QuotaReserved")
		return c != nil && c.Status == "False" && c.Reason == "Pending"
	})
	queueName, _, _ := unstructured.NestedString(wl.Object, "spec", "queueName")
	var podSets []string
	sets, _, _ := unstructured.NestedSlice(wl.Object, "spec", "podSets")
	for _, s := range sets {
		podSets = append(podSets, s.(map[string]any)["name"].(string))
	}
	if queueName != q.localQueue || strings.Join(podSets, ",") != "head,submitter" {
		t.Errorf("Workload %s: queue %q, pod sets %v; want %q, [head submitter]", wl.GetName(), queueName, podSets, q.localQueue)
	}

	old := &unstructured.Unstructured{}
	old.SetGroupVersionKind(workloadGVK.GroupVersion().WithKind("Workload"))
	old.SetAPIVersion("kueue.x-k8s.io/v1beta1")
	if err := shared.Client.Get(t.Context(), client.ObjectKeyFromObject(wl), old); err != nil {
		t.Errorf("reading Workload %s at v1beta1 through Kueue's conversion webhook: %v", wl.GetName(), err)
	}

	got := &rayv1.RayJob{}
	if err := shared.Client.Get(t.Context(), client.ObjectKeyFromObject(job), got); err != nil {
		t.Fatal(err)
	}
	clusters := &rayv1.RayClusterList{}
	if err := shared.Client.List(t.Context(), clusters, client.InNamespace(q.namespace)); err != nil {
		t.Fatal(err)
	}
	if !got.Spec.Suspend || len(clusters.Items) != 0 {
		t.Errorf("a RayJob Kueue has not admitted: suspend %v, %d RayClusters; want suspended and none", got.Spec.Suspend, len(clusters.Items))
	}
}
