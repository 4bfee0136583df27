package e2eutil

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/ray-operator/ray-operator/local/internal/node"
)

// ParallelCPUFactor is how many times the machine's CPUs the node of a
// suite whose waiting tests run in parallel advertises: three tests' Ray
// clusters (a head asks 0.5 CPU, a worker up to 1), each a RayService's
// two during an upgrade, then fit by request (12 CPUs on a 2-CPU
// machine), and no test waits for another's Pods to be scheduled. Ray
// itself sizes its nodes from their containers' limits, not from this.
const ParallelCPUFactor = 6

// ParallelCapacity is the node capacity for such a suite: the machine's
// (node.MachineCapacity) with ParallelCPUFactor times its CPUs.
func ParallelCapacity() (corev1.ResourceList, error) {
	capacity, err := node.MachineCapacity()
	if err != nil {
		return nil, err
	}
	cpu := capacity[corev1.ResourceCPU]
	capacity[corev1.ResourceCPU] = *resource.NewQuantity(ParallelCPUFactor*cpu.Value(), resource.DecimalSI)
	return capacity, nil
}
