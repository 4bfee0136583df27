package cluster_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// idleWindow is how long the footprint benchmark watches a ready cluster's
// CPU use.
const idleWindow = 30 * time.Second

// BenchmarkMinimalClusterFootprint applies config/samples/ray-cluster.minimal.yaml
// (one head, one worker) and reports the seconds from apply to state ready,
// then each pod's memory and CPU use while the cluster idles, averaged over
// the clusters of the run (one per iteration, one after another). `make
// bench-local` runs it.
func BenchmarkMinimalClusterFootprint(b *testing.B) {
	sums := map[string]float64{}
	for range b.N {
		ns := shared.namespace(b)
		for name, value := range measureMinimalCluster(b, ns) {
			sums[name] += value
		}
		// The next cluster needs the node's CPUs.
		ctx, cancel := context.WithTimeout(context.Background(), namespaceGoneTimeout)
		shared.deleteNamespace(ctx, b, ns)
		cancel()
	}
	for name, sum := range sums {
		b.ReportMetric(sum/float64(b.N), name)
	}
}

// measureMinimalCluster applies the sample in ns and returns its figures by
// metric name.
func measureMinimalCluster(b *testing.B, ns string) map[string]float64 {
	began := time.Now()
	cluster := shared.applySample(b, ns, "ray-cluster.minimal.yaml").(*rayv1.RayCluster)
	shared.waitClusterReady(b, ns, cluster.Name)
	figures := map[string]float64{"s-apply-to-ready": time.Since(began).Seconds()}
	start := shared.clusterUsage(b, ns, cluster.Name)
	time.Sleep(idleWindow) // a measurement window, not a wait for a condition
	end := shared.clusterUsage(b, ns, cluster.Name)
	for role, u := range end {
		figures[role+"-rss-MiB"] = float64(u.rss) / (1 << 20)
		figures[role+"-memory-MiB"] = float64(u.memory) / (1 << 20)
		figures[role+"-idle-millicores"] = float64(u.cpu-start[role].cpu) / float64(idleWindow) * 1000
	}
	return figures
}

// podUsage is what the node's /stats/summary says a pod uses: RSS, all
// charged memory, CPU time since its containers started.
type podUsage struct {
	rss, memory uint64
	cpu         time.Duration
}

// clusterUsage reads the node's /stats/summary through the API server's
// node proxy and returns the usage of a RayCluster's pods by role ("head",
// "worker").
func (s *suite) clusterUsage(tb testing.TB, ns, cluster string) map[string]podUsage {
	tb.Helper()
	ctx := context.Background()
	pods := &corev1.PodList{}
	if err := s.Client.List(ctx, pods, client.InNamespace(ns), client.MatchingLabels{"ray.io/cluster": cluster}); err != nil {
		tb.Fatal(err)
	}
	data, err := s.Clientset.CoreV1().RESTClient().Get().AbsPath("/api/v1/nodes", s.Cluster.NodeName, "proxy/stats/summary").DoRaw(ctx)
	if err != nil {
		tb.Fatalf("GET /stats/summary through the node proxy: %v", err)
	}
	var summary statsv1alpha1.Summary
	if err := json.Unmarshal(data, &summary); err != nil {
		tb.Fatal(err)
	}
	byUID := map[string]statsv1alpha1.PodStats{}
	for _, p := range summary.Pods {
		byUID[p.PodRef.UID] = p
	}
	out := map[string]podUsage{}
	for _, p := range pods.Items {
		st, ok := byUID[string(p.UID)]
		if !ok || st.Memory == nil || st.CPU == nil {
			tb.Fatalf("the node's summary has no usage of pod %s", p.Name)
		}
		out[p.Labels["ray.io/node-type"]] = podUsage{
			rss:    ptr.Deref(st.Memory.RSSBytes, 0),
			memory: ptr.Deref(st.Memory.UsageBytes, 0),
			cpu:    time.Duration(ptr.Deref(st.CPU.UsageCoreNanoSeconds, 0)), //nolint:gosec // CPU time fits
		}
	}
	return out
}

// waitClusterReady waits until the RayCluster's state is ready.
func (s *suite) waitClusterReady(tb testing.TB, ns, name string) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), rayJobTimeout)
	defer cancel()
	rc := &rayv1.RayCluster{}
	err := poll(ctx, func() (bool, error) {
		if err := s.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, rc); err != nil {
			return false, err
		}
		return rc.Status.State == rayv1.Ready, fmt.Errorf("state %q", rc.Status.State)
	})
	if err != nil {
		tb.Fatalf("RayCluster %s is not ready: %v", name, err)
	}
}
