package cluster_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/local/internal/sandbox"
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
	pods := shared.clusterSandboxes(b, ns, cluster.Name)
	start := usageOf(b, pods)
	time.Sleep(idleWindow) // a measurement window, not a wait for a condition
	end := usageOf(b, pods)
	for role, u := range end {
		figures[role+"-rss-MiB"] = float64(u.RSSBytes) / (1 << 20)
		figures[role+"-memory-MiB"] = float64(u.MemoryBytes) / (1 << 20)
		figures[role+"-idle-millicores"] = float64(u.CPU-start[role].CPU) / float64(idleWindow) * 1000
	}
	return figures
}

// usageOf reads each role's sandbox usage.
func usageOf(b *testing.B, pods map[string]*sandbox.Sandbox) map[string]sandbox.Usage {
	b.Helper()
	out := map[string]sandbox.Usage{}
	for role, s := range pods {
		u, err := s.Usage()
		if err != nil {
			b.Fatal(err)
		}
		out[role] = u
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
		if err := s.client.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, rc); err != nil {
			return false, err
		}
		return rc.Status.State == rayv1.Ready, fmt.Errorf("state %q", rc.Status.State)
	})
	if err != nil {
		tb.Fatalf("RayCluster %s is not ready: %v", name, err)
	}
}

// clusterSandboxes returns the sandboxes of a RayCluster's pods by role
// ("head", "worker").
func (s *suite) clusterSandboxes(tb testing.TB, ns, cluster string) map[string]*sandbox.Sandbox {
	tb.Helper()
	pods := &corev1.PodList{}
	if err := s.client.List(context.Background(), pods, client.InNamespace(ns), client.MatchingLabels{"ray.io/cluster": cluster}); err != nil {
		tb.Fatal(err)
	}
	out := map[string]*sandbox.Sandbox{}
	for _, p := range pods.Items {
		sb, ok := s.cluster.Host.Sandbox(string(p.UID))
		if !ok {
			tb.Fatalf("pod %s has no sandbox on the node", p.Name)
		}
		out[p.Labels["ray.io/node-type"]] = sb
	}
	return out
}
