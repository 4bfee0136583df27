package podworker

import (
	"errors"

	"github.com/ray-operator/ray-operator/local/internal/podinputs"
)

// waitingError is the reason a container is waiting, as a kubelet reports
// it (ErrImagePull, CreateContainerConfigError, CrashLoopBackOff...).
type waitingError struct {
	Reason, Message string
}

// Error implements error.
func (e *waitingError) Error() string { return e.Reason + ": " + e.Message }

// Waiting reasons and messages as a kubelet writes them.
const (
	reasonErrImagePull        = "ErrImagePull"
	reasonConfigError         = podinputs.ReasonCreateContainerConfigError
	reasonCrashLoopBackOff    = "CrashLoopBackOff"
	reasonContainerCreating   = podinputs.ReasonContainerCreating
	reasonPodInitializing     = "PodInitializing"
	reasonCompleted           = "Completed"
	reasonError               = "Error"
	reasonPodCompleted        = "PodCompleted"
	reasonContainersNotReady  = "ContainersNotReady"
	reasonContainersNotInited = "ContainersNotInitialized"
	// reasonReadinessGatesNotReady is Ready's reason while a readiness
	// gate is unmet.
	reasonReadinessGatesNotReady = "ReadinessGatesNotReady"
)

// asWaiting turns an error of Inputs or of the sandbox into a waiting
// reason: a *podinputs.ConfigError carries its own, anything else gets
// reason.
func asWaiting(err error, reason string) *waitingError {
	var ce *podinputs.ConfigError
	if errors.As(err, &ce) {
		return &waitingError{Reason: ce.Reason, Message: ce.Message}
	}
	return &waitingError{Reason: reason, Message: err.Error()}
}
