package kubeletapi

import (
	"encoding/json"
	"net/http"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	"k8s.io/utils/ptr"

	"github.com/ray-operator/ray-operator/local/internal/sandbox"
)

// serveSummary serves GET /stats/summary: the kubelet's stats Summary with
// the CPU and memory of the node, its pods and their containers.
// Cumulative CPU time is given; instantaneous usage (usageNanoCores) is
// not, since it needs two readings.
func (s *Server) serveSummary(w http.ResponseWriter, _ *http.Request) {
	snap := s.readUsage()
	if snap.nodeErr != nil {
		http.Error(w, snap.nodeErr.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(summary(s.NodeName, snap))
}

// summary is the stats Summary of a reading; each figure carries the time
// it was read.
func summary(nodeName string, snap usageSnapshot) *statsv1alpha1.Summary {
	at := metav1.NewTime(snap.at)
	out := &statsv1alpha1.Summary{
		Node: statsv1alpha1.NodeStats{
			NodeName:  nodeName,
			StartTime: metav1.NewTime(snap.node.BootTime),
			CPU:       cpuStats(at, snap.node.Usage),
			Memory:    memoryStats(at, snap.node.Usage),
		},
		Pods: make([]statsv1alpha1.PodStats, 0, len(snap.pods)),
	}
	for _, p := range snap.pods {
		podAt := metav1.NewTime(p.At())
		pod := statsv1alpha1.PodStats{
			PodRef:    statsv1alpha1.PodReference{Name: p.Name, Namespace: p.Namespace, UID: p.UID},
			StartTime: metav1.NewTime(p.StartTime),
			CPU:       cpuStats(podAt, p.Total()),
			Memory:    memoryStats(podAt, p.Total()),
		}
		for _, c := range p.Containers {
			cAt := metav1.NewTime(c.At)
			pod.Containers = append(pod.Containers, statsv1alpha1.ContainerStats{
				Name:      c.Name,
				StartTime: metav1.NewTime(c.StartTime),
				CPU:       cpuStats(cAt, c.Usage),
				Memory:    memoryStats(cAt, c.Usage),
			})
		}
		out.Pods = append(out.Pods, pod)
	}
	return out
}

func cpuStats(at metav1.Time, u sandbox.Usage) *statsv1alpha1.CPUStats {
	return &statsv1alpha1.CPUStats{Time: at, UsageCoreNanoSeconds: ptr.To(uint64(u.CPU / time.Nanosecond))} //nolint:gosec // CPU time is never negative
}

// memoryStats gives RSS only where it is known (not for the node).
func memoryStats(at metav1.Time, u sandbox.Usage) *statsv1alpha1.MemoryStats {
	m := &statsv1alpha1.MemoryStats{Time: at, UsageBytes: ptr.To(u.MemoryBytes), WorkingSetBytes: ptr.To(u.WorkingSetBytes)}
	if u.RSSBytes > 0 {
		m.RSSBytes = ptr.To(u.RSSBytes)
	}
	return m
}
