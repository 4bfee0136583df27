package raycluster

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// rejectReplica makes the API refuse the create of group's worker Pods with
// the given replica index while *refuse is true.
func rejectReplica(group, index string, refuse *bool) interceptor.Funcs {
	return interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			l := obj.GetLabels()
			if *refuse && l[rayv1.LabelGroup] == group && l[rayv1.LabelWorkerReplicaIndex] == index {
				return errors.New("exceeded quota: pods")
			}
			return c.Create(ctx, obj, opts...)
		},
	}
}

func replicaIndices(pods []corev1.Pod) []string {
	out := make([]string, 0, len(pods))
	for i := range pods {
		out = append(out, pods[i].Labels[rayv1.LabelWorkerReplicaIndex])
	}
	slices.Sort(out)
	return out
}

// TestWorkerCreatesInBatches: a group's Pods are created in batches of 1,
// 2, 4, ...; a refused create ends the pass after its batch: replica 1's
// batch-mate 2 is created, 3 to 6 are not tried. The refusal gets a warning
// event and the ReplicaFailure condition; the next passes create what is
// missing and clear the condition.
func TestWorkerCreatesInBatches(t *testing.T) {
	refuse := true
	h := newHarnessWithFuncs(t, Options{}, rejectReplica("big", "1", &refuse), makeCluster("rc").worker("big", 7).obj())

	if _, err := h.reconcile("rc"); !errors.Is(err, errFailedCreateWorkerPod) {
		t.Fatalf("Reconcile() error = %v, want %v", err, errFailedCreateWorkerPod)
	}
	if got, want := replicaIndices(h.pods(groupPodLabels("big"))), []string{"0", "2"}; !slices.Equal(got, want) {
		t.Errorf("replica indices after the refused create = %v, want %v", got, want)
	}
	var warnings []string
	for _, e := range h.eventStrings() {
		if strings.HasPrefix(e, "Warning ") {
			warnings = append(warnings, e)
		}
	}
	if len(warnings) != 1 || !strings.HasPrefix(warnings[0], "Warning FailedToCreateWorkerPod ") || !strings.Contains(warnings[0], "exceeded quota") {
		t.Errorf("warning events = %q, want one FailedToCreateWorkerPod naming the refusal", warnings)
	}
	if c := meta.FindStatusCondition(h.cluster("rc").Status.Conditions, "ReplicaFailure"); c == nil || c.Status != "True" {
		t.Errorf("ReplicaFailure condition = %+v, want True", c)
	}

	refuse = false
	h.mustReconcile("rc", 2) // the second pass writes the status the first one's creations change
	want := []string{"0", "1", "2", "3", "4", "5", "6"}
	if got := replicaIndices(h.pods(groupPodLabels("big"))); !slices.Equal(got, want) {
		t.Errorf("replica indices after the next pass = %v, want %v", got, want)
	}
	if c := meta.FindStatusCondition(h.cluster("rc").Status.Conditions, "ReplicaFailure"); c != nil && c.Status == "True" {
		t.Errorf("ReplicaFailure condition = %+v after a pass without failures", c)
	}
}
