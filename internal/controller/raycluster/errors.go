package raycluster

import (
	"errors"
)

// Pod failures that set the ReplicaFailure condition, with KubeRay's
// condition reasons. Other reconcile errors leave the condition as it is.
var (
	errFailedDeleteAllPods     = errors.New("failed to delete all Pods")
	errFailedDeleteHeadPod     = errors.New("failed to delete head Pod")
	errFailedCreateHeadPod     = errors.New("failed to create head Pod")
	errFailedDeleteWorkerPod   = errors.New("failed to delete worker Pod")
	errFailedCreateWorkerPod   = errors.New("failed to create worker Pod")
	errFailedBatchScheduling   = errors.New("batch scheduling failed")
	replicaFailureReasonsByErr = []struct {
		err    error
		reason string
	}{
		{errFailedDeleteAllPods, "FailedDeleteAllPods"},
		{errFailedDeleteHeadPod, "FailedDeleteHeadPod"},
		{errFailedCreateHeadPod, "FailedCreateHeadPod"},
		{errFailedDeleteWorkerPod, "FailedDeleteWorkerPod"},
		{errFailedCreateWorkerPod, "FailedCreateWorkerPod"},
		{errFailedBatchScheduling, reasonFailedBatchScheduling},
	}
)

// replicaFailureReason is the ReplicaFailure reason of a reconcile error,
// or "" when the error is not a Pod failure.
func replicaFailureReason(err error) string {
	for _, r := range replicaFailureReasonsByErr {
		if errors.Is(err, r.err) {
			return r.reason
		}
	}
	return ""
}
