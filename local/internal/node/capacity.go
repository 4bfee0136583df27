package node

import (
	"fmt"
	goruntime "runtime"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// CapacityAnnotation is the Node annotation that says what the node
// advertises and why (`kubectl describe node` shows it).
const CapacityAnnotation = "ray-operator.local/capacity"

// The default CPU capacity is CPUPerMachineCPU times the machine's CPUs,
// and at least MinDefaultCPU: the scheduler places pods by their requests,
// and KubeRay's samples ask for more CPUs than a small machine has (a
// RayJob's head, worker and submitter 1 each; the autoscaler samples' head
// 1, autoscaler 0.5 and up to 10 workers of 1). The containers still share
// the machine's CPUs in proportion to their requests (cpu shares) and stay
// within their limits (CFS quota), as on a kubelet's node whose pods ask
// for less than they use.
const (
	CPUPerMachineCPU = 4
	MinDefaultCPU    = 16
)

// MinMemory is the least memory the node may advertise: below it not one
// Ray head of KubeRay's samples fits.
const MinMemory = 1 << 30

// defaultPods is the kubelet's default --max-pods.
const defaultPods = 110

// Machine is what the machine has.
type Machine struct {
	// CPUs is the number of CPUs this process may run on.
	CPUs int64
	// MemoryBytes is MemTotal of /proc/meminfo.
	MemoryBytes int64
}

// ReadMachine reads the machine's CPUs and memory.
func ReadMachine() (Machine, error) {
	mem, err := machineMemory()
	if err != nil {
		return Machine{}, err
	}
	return Machine{CPUs: int64(goruntime.NumCPU()), MemoryBytes: mem}, nil
}

// Capacity is what the node advertises (capacity and allocatable) and why.
type Capacity struct {
	// Resources are cpu, memory and pods.
	Resources corev1.ResourceList
	// Note says where each figure comes from, for CapacityAnnotation.
	Note string
	// Overcommitted is set when the memory is more than the machine's.
	Overcommitted bool
}

// ChooseCapacity is the node's capacity from the user's CPU and memory
// quantities (empty: the default, see CPUPerMachineCPU; the machine's
// memory). It refuses what does not parse, a CPU below 1 and memory below
// MinMemory. flagCPU and flagMemory name the settings in the note.
func ChooseCapacity(m Machine, cpu, memory, flagCPU, flagMemory string) (Capacity, error) {
	cpuQ, cpuWhy, err := chooseCPU(m, cpu, flagCPU)
	if err != nil {
		return Capacity{}, err
	}
	memQ, memWhy, over, err := chooseMemory(m, memory, flagMemory)
	if err != nil {
		return Capacity{}, err
	}
	return Capacity{
		Resources: corev1.ResourceList{
			corev1.ResourceCPU:    cpuQ,
			corev1.ResourceMemory: memQ,
			corev1.ResourcePods:   *resource.NewQuantity(defaultPods, resource.DecimalSI),
		},
		Note:          fmt.Sprintf("cpu: %s (%s); memory: %s (%s)", cpuQ.String(), cpuWhy, memQ.String(), memWhy),
		Overcommitted: over,
	}, nil
}

func chooseCPU(m Machine, value, flag string) (resource.Quantity, string, error) {
	if value == "" {
		n := max(CPUPerMachineCPU*m.CPUs, MinDefaultCPU)
		why := fmt.Sprintf("the larger of %d and %d times the machine's %d CPUs, so that KubeRay's samples fit; shared by requests, capped by limits; --%s to change",
			MinDefaultCPU, CPUPerMachineCPU, m.CPUs, flag)
		return *resource.NewQuantity(n, resource.DecimalSI), why, nil
	}
	q, err := resource.ParseQuantity(value)
	if err != nil {
		return q, "", fmt.Errorf("--%s=%s: %w", flag, value, err)
	}
	if q.MilliValue() < 1000 {
		return q, "", fmt.Errorf("--%s=%s: the node must advertise at least 1 CPU", flag, value)
	}
	return q, fmt.Sprintf("--%s; the machine has %d", flag, m.CPUs), nil
}

func chooseMemory(m Machine, value, flag string) (resource.Quantity, string, bool, error) {
	machine := resource.NewQuantity(m.MemoryBytes, resource.BinarySI)
	if value == "" {
		return *machine, fmt.Sprintf("the machine's; --%s to change", flag), false, nil
	}
	q, err := resource.ParseQuantity(value)
	if err != nil {
		return q, "", false, fmt.Errorf("--%s=%s: %w", flag, value, err)
	}
	if q.Value() < MinMemory {
		return q, "", false, fmt.Errorf("--%s=%s: the node must advertise at least %s", flag, value, resource.NewQuantity(MinMemory, resource.BinarySI))
	}
	if q.Value() > m.MemoryBytes {
		return q, fmt.Sprintf("--%s, more than the machine's %s: overcommitted, pods may be OOM-killed before their requests are used", flag, machine), true, nil
	}
	return q, fmt.Sprintf("--%s; the machine has %s", flag, machine), false, nil
}

// MachineCapacity is the machine's CPUs and memory, and 110 Pods (the
// kubelet's default): what a suite that sizes its node itself starts from.
func MachineCapacity() (corev1.ResourceList, error) {
	m, err := ReadMachine()
	if err != nil {
		return nil, err
	}
	return corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewQuantity(m.CPUs, resource.DecimalSI),
		corev1.ResourceMemory: *resource.NewQuantity(m.MemoryBytes, resource.BinarySI),
		corev1.ResourcePods:   *resource.NewQuantity(defaultPods, resource.DecimalSI),
	}, nil
}
