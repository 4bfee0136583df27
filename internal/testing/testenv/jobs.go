package testenv

import (
	"context"
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// FinishJob makes a batch Job look as the Job controller leaves it once it
// ended at `at`: started, and either Complete (with SuccessCriteriaMet and
// one succeeded Pod) or Failed with BackoffLimitExceeded (with
// FailureTarget, after backoffLimit+1 failed Pods). In a bare API server
// nothing else does. job is updated in place to the stored object.
func FinishJob(ctx context.Context, c client.Client, job *batchv1.Job, succeeded bool, at time.Time) error {
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(job), job); err != nil {
			return err
		}
		setFinished(job, succeeded, metav1.NewTime(at))
		return c.Status().Update(ctx, job)
	})
	if err != nil {
		return fmt.Errorf("finishing Job %s/%s: %w", job.Namespace, job.Name, err)
	}
	return nil
}

// setFinished writes the status of a Job that ended at now.
func setFinished(job *batchv1.Job, succeeded bool, now metav1.Time) {
	status := &job.Status
	if status.StartTime == nil {
		status.StartTime = &now
	}
	status.Active = 0
	condition := func(t batchv1.JobConditionType, reason string) batchv1.JobCondition {
		return batchv1.JobCondition{Type: t, Status: corev1.ConditionTrue, Reason: reason, LastTransitionTime: now, LastProbeTime: now}
	}
	if succeeded {
		status.CompletionTime, status.Succeeded = &now, 1
		status.Conditions = []batchv1.JobCondition{
			condition(batchv1.JobSuccessCriteriaMet, "CompletionsReached"),
			condition(batchv1.JobComplete, "CompletionsReached"),
		}
		return
	}
	status.Failed = ptr.Deref(job.Spec.BackoffLimit, 6) + 1
	status.Conditions = []batchv1.JobCondition{
		condition(batchv1.JobFailureTarget, "BackoffLimitExceeded"),
		condition(batchv1.JobFailed, "BackoffLimitExceeded"),
	}
}
