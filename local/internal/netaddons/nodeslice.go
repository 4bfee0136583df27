package netaddons

import (
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/ray-operator/ray-operator/internal/controlplane"
)

// sliceManager marks the EndpointSlices of host processes as this
// project's, so that no Kubernetes controller takes them over.
const sliceManager = "controlplane.ray-operator.io"

// NodeSlice is the EndpointSlice of a selector-less Service whose one
// endpoint is a process on the host, at the node's address: always ready,
// with ports.
func NodeSlice(namespace, service string, n *controlplane.NodeNetwork, ports ...discoveryv1.EndpointPort) *discoveryv1.EndpointSlice {
	return &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{
			Name:      service + "-node",
			Namespace: namespace,
			Labels: map[string]string{
				discoveryv1.LabelServiceName: service,
				discoveryv1.LabelManagedBy:   sliceManager,
			},
		},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints: []discoveryv1.Endpoint{{
			Addresses:  []string{n.NodeIP.String()},
			Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)},
			NodeName:   ptr.To(n.NodeName),
		}},
		Ports: ports,
	}
}
