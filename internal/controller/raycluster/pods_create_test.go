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

// TestWorkerCreatesInBatches: a new cluster's creates go in rounds of
// doubling size: the head Service and head Pod, then four workers, then
// eight; a refused create ends the pass after its round: replica 1's
// round-mates 0, 2 and 3 are created, 4 to 6 are not tried. The refusal
// gets a warning event and the ReplicaFailure condition; the next passes
// create what is missing and clear the condition.
func TestWorkerCreatesInBatches(t *testing.T) {
	refuse := true
	h := newHarnessWithFuncs(t, Options{}, rejectReplica("big", "1", &refuse), makeCluster("rc").worker("big", 7).obj())

	if _, err := h.reconcile("rc"); !errors.Is(err, errFailedCreateWorkerPod) {
		t.Fatalf("Reconcile() error = %v, want %v", err, errFailedCreateWorkerPod)
	}
	if got, want := replicaIndices(h.pods(groupPodLabels("big"))), []string{"0", "2", "3"}; !slices.Equal(got, want) {
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

// TestCreateRoundsSpanThePass: the slow start is the pass's, not each
// group's. After the head round (Service and head Pod: two creates), group
// a's three workers go in one round of up to four, and group b's first
// round may hold eight: a refusal of b's replica 0 leaves its five
// round-mates created. A pass that started every group at one Pod (as
// before) would have created none of b's Pods after that refusal.
func TestCreateRoundsSpanThePass(t *testing.T) {
	refuse := true
	h := newHarnessWithFuncs(t, Options{}, rejectReplica("b", "0", &refuse),
		makeCluster("rc").worker("a", 3).worker("b", 6).obj())

	if _, err := h.reconcile("rc"); !errors.Is(err, errFailedCreateWorkerPod) {
		t.Fatalf("Reconcile() error = %v, want %v", err, errFailedCreateWorkerPod)
	}
	if got := h.pods(headPodLabels); len(got) != 1 {
		t.Errorf("%d head Pods, want 1", len(got))
	}
	if got, want := replicaIndices(h.pods(groupPodLabels("a"))), []string{"0", "1", "2"}; !slices.Equal(got, want) {
		t.Errorf("group a replica indices = %v, want %v", got, want)
	}
	if got, want := replicaIndices(h.pods(groupPodLabels("b"))), []string{"1", "2", "3", "4", "5"}; !slices.Equal(got, want) {
		t.Errorf("group b replica indices = %v, want %v", got, want)
	}
}

// TestFirstRoundOfWorkersWaitsForTheHead: the head round still comes first
// and alone: a refused head Pod ends the pass before any worker is created,
// as in KubeRay.
func TestFirstRoundOfWorkersWaitsForTheHead(t *testing.T) {
	refuse := true
	funcs := interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if _, ok := obj.(*corev1.Pod); ok && refuse && obj.GetLabels()[rayv1.LabelNodeType] == string(rayv1.HeadNode) {
				return errors.New("exceeded quota: pods")
			}
			return c.Create(ctx, obj, opts...)
		},
	}
	h := newHarnessWithFuncs(t, Options{}, funcs, makeCluster("rc").worker("a", 3).obj())
	if _, err := h.reconcile("rc"); !errors.Is(err, errFailedCreateHeadPod) {
		t.Fatalf("Reconcile() error = %v, want %v", err, errFailedCreateHeadPod)
	}
	if got := h.pods(workerPodLabels); len(got) != 0 {
		t.Errorf("%d worker Pods created in a pass whose head Pod was refused, want 0", len(got))
	}
}
