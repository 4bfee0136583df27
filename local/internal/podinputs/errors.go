package podinputs

import (
	"fmt"
	"strings"
)

// Waiting reasons a kubelet shows for the failures this package reports.
const (
	// ReasonCreateContainerConfigError is the waiting reason for a container
	// whose environment refers to a missing Secret, ConfigMap or key.
	ReasonCreateContainerConfigError = "CreateContainerConfigError"
	// ReasonContainerCreating is the waiting reason while a pod's volumes
	// cannot be set up (a kubelet reports the cause in a FailedMount event).
	ReasonContainerCreating = "ContainerCreating"
	// ReasonCreateContainerError is the waiting reason for a container that
	// cannot be created from what it was given (no command at all, a
	// subPath that leaves its volume).
	ReasonCreateContainerError = "CreateContainerError"
	// ReasonInvalidImageName is the waiting reason for an image reference
	// that does not parse.
	ReasonInvalidImageName = "InvalidImageName"
)

// ConfigError is a problem with what a pod refers to: the node puts Reason
// and Message into the container's waiting state and retries later, as a
// kubelet does.
type ConfigError struct {
	// Reason is the container's waiting reason, one of the Reason constants.
	Reason string
	// Message is worded as a kubelet words it and names the object and key.
	Message string
	// Err is the underlying error when there is one (an API error, say), so
	// that callers can tell a NotFound from an unreachable API server.
	Err error
}

func (e *ConfigError) Error() string { return e.Message }

// Unwrap returns the underlying error.
func (e *ConfigError) Unwrap() error { return e.Err }

func configErrorf(format string, args ...any) *ConfigError {
	return &ConfigError{Reason: ReasonCreateContainerConfigError, Message: fmt.Sprintf(format, args...)}
}

// NoLocalImageError says that an image reference has no local equivalent.
type NoLocalImageError struct {
	// Ref is the image reference as the pod gave it.
	Ref string
	// Local lists the short patterns of the images that do have one.
	Local []string
}

func (e *NoLocalImageError) Error() string {
	return fmt.Sprintf("image %q has no local equivalent (local images: %s; see docs/local.md)",
		e.Ref, strings.Join(e.Local, ", "))
}
