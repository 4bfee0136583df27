package node

import (
	"sort"

	"k8s.io/utils/clock"

	"github.com/ray-operator/ray-operator/local/internal/kubeletapi"
	"github.com/ray-operator/ray-operator/local/internal/podworker"
	"github.com/ray-operator/ray-operator/local/internal/sandbox"
)

var _ kubeletapi.Usage = (*provider)(nil)

// procDir is where the machine's figures are read.
const procDir = "/proc"

// NodeUsage implements kubeletapi.Usage: the machine's figures.
func (p *provider) NodeUsage() (sandbox.MachineUsage, error) {
	return sandbox.ReadMachineUsage(procDir)
}

// PodUsage implements kubeletapi.Usage: the pods with a running container,
// sorted by namespace and name.
func (p *provider) PodUsage() []kubeletapi.PodUsage {
	ws := p.allWorkers()
	pods := make([]kubeletapi.PodUsage, 0, len(ws))
	for _, w := range ws {
		if u := podUsage(w, p.deps.Clock); len(u.Containers) > 0 {
			pods = append(pods, u)
		}
	}
	sort.Slice(pods, func(i, j int) bool {
		if pods[i].Namespace != pods[j].Namespace {
			return pods[i].Namespace < pods[j].Namespace
		}
		return pods[i].Name < pods[j].Name
	})
	return pods
}

// podUsage reads the cgroups of a pod's running containers; one that ends
// meanwhile is left out.
func podUsage(w *podworker.Worker, clk clock.PassiveClock) kubeletapi.PodUsage {
	pod := w.Pod()
	u := kubeletapi.PodUsage{Namespace: pod.Namespace, Name: pod.Name, UID: string(pod.UID), StartTime: pod.CreationTimestamp.Time}
	if pod.Status.StartTime != nil {
		u.StartTime = pod.Status.StartTime.Time
	}
	for _, c := range w.RunningContainers() {
		usage, err := c.Proc.Usage()
		if err != nil {
			continue
		}
		u.Containers = append(u.Containers, kubeletapi.ContainerUsage{Name: c.Name, StartTime: c.Proc.StartedAt(), Usage: usage, At: clk.Now()})
	}
	return u
}
