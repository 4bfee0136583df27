package e2eutil

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/ray-operator/ray-operator/local/internal/node"
)

func TestParallelCapacity(t *testing.T) {
	machine, err := node.MachineCapacity()
	if err != nil {
		t.Fatal(err)
	}
	got, err := ParallelCapacity()
	if err != nil {
		t.Fatal(err)
	}
	cpu, machineCPU := got[corev1.ResourceCPU], machine[corev1.ResourceCPU]
	if cpu.Value() != ParallelCPUFactor*machineCPU.Value() {
		t.Errorf("cpu %s, want %d times the machine's %s", cpu.String(), ParallelCPUFactor, machineCPU.String())
	}
	for _, name := range []corev1.ResourceName{corev1.ResourceMemory, corev1.ResourcePods} {
		if g, m := got[name], machine[name]; !g.Equal(m) {
			t.Errorf("%s %s, want the machine's %s", name, g.String(), m.String())
		}
	}
}
