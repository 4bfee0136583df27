package raycluster

import (
	"context"
	"errors"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/batchscheduler"
)

// submitter is a batch scheduler plugin whose submission returns err.
type submitter struct{ err error }

func (*submitter) Name() string { return "test-scheduler" }

func (s *submitter) DoBatchSchedulingOnSubmission(context.Context, client.Object) error { return s.err }

// TestBatchSchedulerWaitIsNotAFailure: a plugin that waits (KubernetesWAS
// replacing its PodGroup) ends the pass without Pods, without a Warning or
// the ReplicaFailure condition, and with a requeue; a plugin's failure gets
// both and no Pods.
func TestBatchSchedulerWaitIsNotAFailure(t *testing.T) {
	for name, c := range map[string]struct {
		err         error
		wantEvents  []string
		wantFailure bool
	}{
		"waiting": {err: batchscheduler.Waiting("test-scheduler", "deleted stale PodGroup ns/pg")},
		"failing": {err: errors.New("boom"), wantEvents: []string{"Warning FailedBatchScheduling"}, wantFailure: true},
	} {
		t.Run(name, func(t *testing.T) {
			sched := &submitter{err: c.err}
			h := newHarness(t, Options{BatchScheduler: sched}, makeCluster("rc").worker("small", 1).obj())
			res, err := h.reconcile("rc")
			if c.wantFailure != (err != nil) {
				t.Fatalf("Reconcile() = %v, %v", res, err)
			}
			if !c.wantFailure && res.RequeueAfter != batchSchedulerWait {
				t.Errorf("RequeueAfter %v, want %v", res.RequeueAfter, batchSchedulerWait)
			}
			if pods := h.pods(map[string]string{rayv1.LabelCluster: "rc"}); len(pods) != 0 {
				t.Errorf("%d Pods made before the plugin was ready", len(pods))
			}
			var warnings []string
			for _, r := range h.eventReasons() {
				if r == "Warning FailedBatchScheduling" {
					warnings = append(warnings, r)
				}
			}
			if len(warnings) != len(c.wantEvents) {
				t.Errorf("events %v, want %v", warnings, c.wantEvents)
			}
			failure := meta.FindStatusCondition(h.cluster("rc").Status.Conditions, string(rayv1.RayClusterReplicaFailure))
			if got := failure != nil && failure.Reason == reasonFailedBatchScheduling; got != c.wantFailure {
				t.Errorf("ReplicaFailure %+v, want FailedBatchScheduling %v", failure, c.wantFailure)
			}
		})
	}
}
