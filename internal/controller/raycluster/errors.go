package raycluster

import (
	"errors"
)

// Pod failures that set the ReplicaFailure condition, with KubeRay's
// condition reasons. Other reconcile errors leave the condition as it is.
// Their texts are the reasons, as KubeRay's: the condition's message is the
// joined error, "FailedCreateHeadPod\n<the API server's answer>".
var (
	errFailedDeleteAllPods     = errors.New("FailedDeleteAllPods")
	errFailedDeleteHeadPod     = errors.New("FailedDeleteHeadPod")
	errFailedCreateHeadPod     = errors.New("FailedCreateHeadPod")
	errFailedDeleteWorkerPod   = errors.New("FailedDeleteWorkerPod")
	errFailedCreateWorkerPod   = errors.New("FailedCreateWorkerPod")
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
