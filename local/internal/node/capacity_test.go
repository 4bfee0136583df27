package node

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestChooseCapacity(t *testing.T) {
	const gi = int64(1) << 30
	twoCores := Machine{CPUs: 2, MemoryBytes: 8 * gi}
	cases := map[string]struct {
		machine     Machine
		cpu, memory string
		wantCPU     string
		wantMemory  string
		over        bool
		noteHas     []string
	}{
		"default on 2 CPUs: the floor": {
			machine: twoCores, wantCPU: "16", wantMemory: "8Gi",
			noteHas: []string{"cpu: 16 (the larger of 16 and 4 times the machine's 2 CPUs", "--node-cpu to change", "memory: 8Gi (the machine's; --node-memory to change)"},
		},
		"default on 8 CPUs: 4 times": {machine: Machine{CPUs: 8, MemoryBytes: 8 * gi}, wantCPU: "32", wantMemory: "8Gi"},
		"set below the machine's": {
			machine: twoCores, cpu: "1500m", memory: "2Gi", wantCPU: "1500m", wantMemory: "2Gi",
			noteHas: []string{"cpu: 1500m (--node-cpu; the machine has 2)", "memory: 2Gi (--node-memory; the machine has 8Gi)"},
		},
		"memory over the machine's": {
			machine: twoCores, memory: "32Gi", wantCPU: "16", wantMemory: "32Gi", over: true,
			noteHas: []string{"memory: 32Gi (--node-memory, more than the machine's 8Gi: overcommitted"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ChooseCapacity(tc.machine, tc.cpu, tc.memory, "node-cpu", "node-memory")
			if err != nil {
				t.Fatal(err)
			}
			want := corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse(tc.wantCPU), corev1.ResourceMemory: resource.MustParse(tc.wantMemory),
				corev1.ResourcePods: resource.MustParse("110"),
			}
			if diff := cmp.Diff(want, got.Resources, cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })); diff != "" {
				t.Errorf("resources (-want +got):\n%s", diff)
			}
			if got.Overcommitted != tc.over {
				t.Errorf("overcommitted %v, want %v", got.Overcommitted, tc.over)
			}
			for _, s := range tc.noteHas {
				if !strings.Contains(got.Note, s) {
					t.Errorf("note %q lacks %q", got.Note, s)
				}
			}
		})
	}
}

func TestChooseCapacityRefuses(t *testing.T) {
	m := Machine{CPUs: 2, MemoryBytes: 8 << 30}
	cases := map[string]struct{ cpu, memory, err string }{
		"unparsable cpu":    {cpu: "lots", err: "--node-cpu=lots: quantities must match"},
		"negative cpu":      {cpu: "-2", err: "--node-cpu=-2: the node must advertise at least 1 CPU"},
		"cpu below 1":       {cpu: "500m", err: "--node-cpu=500m: the node must advertise at least 1 CPU"},
		"unparsable memory": {memory: "8GB!", err: "--node-memory=8GB!: quantities must match"},
		"memory too small":  {memory: "512Mi", err: "--node-memory=512Mi: the node must advertise at least 1Gi"},
		"negative memory":   {memory: "-4Gi", err: "--node-memory=-4Gi: the node must advertise at least 1Gi"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := ChooseCapacity(m, tc.cpu, tc.memory, "node-cpu", "node-memory")
			if err == nil || !strings.HasPrefix(err.Error(), tc.err) {
				t.Errorf("error %v, want one starting %q", err, tc.err)
			}
		})
	}
}
