package kubeletapi

import (
	"bytes"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// serveResourceMetrics serves GET /metrics/resource: the kubelet's
// resource metrics (what metrics-server scrapes) in the Prometheus text
// format, every sample stamped in milliseconds with the time its figure
// was read, as the kubelet writes them.
func (s *Server) serveResourceMetrics(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	_, _ = w.Write(renderResourceMetrics(s.readUsage()))
}

// metricFamily is one metric's HELP and TYPE header.
type metricFamily struct{ name, kind, help string }

// The kubelet's resource metric names, labels and types.
var (
	containerCPU       = metricFamily{"container_cpu_usage_seconds_total", "counter", "Cumulative CPU time the container consumed, in core-seconds."}
	containerMemory    = metricFamily{"container_memory_working_set_bytes", "gauge", "Current working set of the container, in bytes."}
	containerStartTime = metricFamily{"container_start_time_seconds", "gauge", "Start time of the container since the Unix epoch, in seconds."}
	nodeCPU            = metricFamily{"node_cpu_usage_seconds_total", "counter", "Cumulative CPU time the node consumed, in core-seconds."}
	nodeMemory         = metricFamily{"node_memory_working_set_bytes", "gauge", "Current working set of the node, in bytes."}
	podCPU             = metricFamily{"pod_cpu_usage_seconds_total", "counter", "Cumulative CPU time the pod consumed, in core-seconds."}
	podMemory          = metricFamily{"pod_memory_working_set_bytes", "gauge", "Current working set of the pod, in bytes."}
	scrapeError        = metricFamily{"scrape_error", "gauge", "1 if there was an error while getting the node's figures, 0 otherwise."}
)

// metricsWriter writes samples of the text format.
type metricsWriter struct {
	buf bytes.Buffer
}

// family writes a metric's header.
func (m *metricsWriter) family(f metricFamily) {
	fmt.Fprintf(&m.buf, "# HELP %s [STABLE] %s\n# TYPE %s %s\n", f.name, f.help, f.name, f.kind)
}

// sample writes one sample stamped with at; labels are name, value pairs.
func (m *metricsWriter) sample(f metricFamily, value float64, at time.Time, labels ...string) {
	m.buf.WriteString(f.name)
	if len(labels) > 0 {
		pairs := make([]string, 0, len(labels)/2)
		for i := 0; i+1 < len(labels); i += 2 {
			pairs = append(pairs, labels[i]+`="`+labelEscaper.Replace(labels[i+1])+`"`)
		}
		m.buf.WriteString("{" + strings.Join(pairs, ",") + "}")
	}
	fmt.Fprintf(&m.buf, " %s %d\n", strconv.FormatFloat(value, 'f', -1, 64), at.UnixMilli())
}

// labelEscaper escapes a label value of the text format.
var labelEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)

// renderResourceMetrics renders a reading as /metrics/resource. Without
// the node's figures, the node's samples are left out and scrape_error is 1.
func renderResourceMetrics(snap usageSnapshot) []byte {
	m := &metricsWriter{}
	forContainers := func(f metricFamily, value func(ContainerUsage) float64) {
		m.family(f)
		for _, p := range snap.pods {
			for _, c := range p.Containers {
				m.sample(f, value(c), c.At, "container", c.Name, "namespace", p.Namespace, "pod", p.Name)
			}
		}
	}
	forContainers(containerCPU, func(c ContainerUsage) float64 { return c.Usage.CPU.Seconds() })
	forContainers(containerMemory, func(c ContainerUsage) float64 { return float64(c.Usage.WorkingSetBytes) })
	forContainers(containerStartTime, func(c ContainerUsage) float64 { return unixSeconds(c.StartTime) })
	if snap.nodeErr == nil {
		m.family(nodeCPU)
		m.sample(nodeCPU, snap.node.CPU.Seconds(), snap.at)
		m.family(nodeMemory)
		m.sample(nodeMemory, float64(snap.node.WorkingSetBytes), snap.at)
	}
	forPods := func(f metricFamily, value func(PodUsage) float64) {
		m.family(f)
		for _, p := range snap.pods {
			m.sample(f, value(p), p.At(), "namespace", p.Namespace, "pod", p.Name)
		}
	}
	forPods(podCPU, func(p PodUsage) float64 { return p.Total().CPU.Seconds() })
	forPods(podMemory, func(p PodUsage) float64 { return float64(p.Total().WorkingSetBytes) })
	m.family(scrapeError)
	fmt.Fprintf(&m.buf, "%s %d\n", scrapeError.name, map[bool]int{true: 1, false: 0}[snap.nodeErr != nil])
	return m.buf.Bytes()
}

// unixSeconds is t in seconds since the epoch, with its fraction.
func unixSeconds(t time.Time) float64 { return float64(t.UnixNano()) / float64(time.Second) }
