package testenv

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// TestFinishJob: a finished Job carries the conditions and counts the Job
// controller writes, at the given time.
func TestFinishJob(t *testing.T) {
	scheme, err := NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	type summary struct {
		Conditions          []batchv1.JobConditionType
		Reason              string
		Succeeded, Failed   int32
		Started, Completion bool
		TransitionAt        time.Time
	}
	for _, tc := range []struct {
		succeeded bool
		want      summary
	}{
		{true, summary{Conditions: []batchv1.JobConditionType{batchv1.JobSuccessCriteriaMet, batchv1.JobComplete},
			Reason: "CompletionsReached", Succeeded: 1, Started: true, Completion: true, TransitionAt: at}},
		{false, summary{Conditions: []batchv1.JobConditionType{batchv1.JobFailureTarget, batchv1.JobFailed},
			Reason: "BackoffLimitExceeded", Failed: 3, Started: true, TransitionAt: at}},
	} {
		job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "submitter", Namespace: "ns"},
			Spec: batchv1.JobSpec{BackoffLimit: ptr.To[int32](2)}}
		c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(job).WithStatusSubresource(&batchv1.Job{}).Build()
		if err := FinishJob(t.Context(), c, job, tc.succeeded, at); err != nil {
			t.Fatal(err)
		}
		got := summary{Succeeded: job.Status.Succeeded, Failed: job.Status.Failed,
			Started: job.Status.StartTime != nil, Completion: job.Status.CompletionTime != nil}
		for _, cond := range job.Status.Conditions {
			got.Conditions = append(got.Conditions, cond.Type)
			got.Reason, got.TransitionAt = cond.Reason, cond.LastTransitionTime.UTC()
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("succeeded=%v: Job status (-want +got):\n%s", tc.succeeded, diff)
		}
	}
}
