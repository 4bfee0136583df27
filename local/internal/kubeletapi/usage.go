package kubeletapi

import (
	"time"

	"github.com/ray-operator/ray-operator/local/internal/sandbox"
)

// Usage supplies the figures of /metrics/resource and /stats/summary.
type Usage interface {
	// NodeUsage reads what the whole node uses now.
	NodeUsage() (sandbox.MachineUsage, error)
	// PodUsage reads what each pod's running containers use now; a
	// container whose figures cannot be read (it just ended) is left out.
	PodUsage() []PodUsage
}

// PodUsage is what one pod's running containers use.
type PodUsage struct {
	// Namespace, Name and UID identify the pod.
	Namespace, Name, UID string
	// StartTime is when the node started the pod.
	StartTime time.Time
	// Containers are the running containers, in the pod's order.
	Containers []ContainerUsage
}

// ContainerUsage is what one running container uses.
type ContainerUsage struct {
	// Name is the container's name in the pod.
	Name string
	// StartTime is when the running attempt started.
	StartTime time.Time
	// Usage is read from the attempt's cgroups.
	Usage sandbox.Usage
	// At is when Usage was read: the time of its samples, so that a rate
	// computed from two readings has the right interval however long the
	// whole reading of the node took.
	At time.Time
}

// At is when the pod's latest container reading was taken.
func (p PodUsage) At() time.Time {
	var at time.Time
	for _, c := range p.Containers {
		if c.At.After(at) {
			at = c.At
		}
	}
	return at
}

// Total sums the pod's containers.
func (p PodUsage) Total() sandbox.Usage {
	var total sandbox.Usage
	for _, c := range p.Containers {
		total.Add(c.Usage)
	}
	return total
}

// usageSnapshot is one reading of the node and its pods; each pod's
// containers carry their own times.
type usageSnapshot struct {
	at      time.Time // when the node's figures were read
	node    sandbox.MachineUsage
	nodeErr error
	pods    []PodUsage
}

// readUsage reads the node and its pods.
func (s *Server) readUsage() usageSnapshot {
	snap := usageSnapshot{at: s.Clock.Now()}
	snap.node, snap.nodeErr = s.Usage.NodeUsage()
	snap.pods = s.Usage.PodUsage()
	return snap
}
