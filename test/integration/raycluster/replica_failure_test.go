package raycluster_test

import (
	"context"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/testing/testenv"
)

// denyPods makes the API server reject Pod creation in the test namespace
// with a ValidatingAdmissionPolicy, and returns a function lifting the ban.
func (w *world) denyPods() func() {
	w.T.Helper()
	return testenv.Deny(w.T, w.Client, w.NS, "deny-pods-"+w.NS, admissionregistrationv1.Create,
		admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}},
		"no Pods in this namespace")
}

// TestPodCreationFailureSetsReplicaFailure checks that a Pod the API server
// refuses is reported (condition and event), and that the report is cleared
// once Pods can be created again.
func TestPodCreationFailureSetsReplicaFailure(t *testing.T) {
	w := newWorld(t)
	allow := w.denyPods()
	// The policy takes effect asynchronously: wait until it rejects a Pod.
	w.Eventually("the admission policy to reject Pods", func() (bool, error) {
		probe := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: w.NS, GenerateName: "probe-"}, Spec: group("probe", 1).Template.Spec}
		err := w.Client.Create(context.Background(), probe)
		if err == nil {
			return false, w.Client.Delete(context.Background(), probe)
		}
		return true, nil
	})
	w.Create(w.newCluster("quota", group("small", 1)))

	rc := w.waitStatus("quota", "ReplicaFailure", func(s *rayv1.RayClusterStatus) bool {
		return meta.IsStatusConditionTrue(s.Conditions, string(rayv1.RayClusterReplicaFailure))
	})
	// KubeRay's message: the reason, a newline, the API server's answer.
	if c := meta.FindStatusCondition(rc.Status.Conditions, string(rayv1.RayClusterReplicaFailure)); c.Reason != "FailedCreateHeadPod" ||
		!strings.HasPrefix(c.Message, "FailedCreateHeadPod\n") || !strings.Contains(c.Message, "no Pods in this namespace") {
		t.Errorf("ReplicaFailure reason = %s, message %q; want FailedCreateHeadPod, \"FailedCreateHeadPod\\n...no Pods in this namespace...\"", c.Reason, c.Message)
	}
	w.WaitEvent("quota", "FailedToCreateHeadPod")

	allow()
	w.WaitPods("quota", nil, 2)
	w.waitStatus("quota", "no ReplicaFailure", func(s *rayv1.RayClusterStatus) bool {
		return meta.FindStatusCondition(s.Conditions, string(rayv1.RayClusterReplicaFailure)) == nil
	})
}
