package raypod

import (
	"os"
	"testing"

	"sigs.k8s.io/yaml"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// completeCluster is config/samples/ray-cluster.complete.yaml with the
// autoscaler and Redis-backed GCS fault tolerance turned on: the largest
// Pods the builders make in practice (autoscaler sidecar, Redis env,
// wait-gcs-ready init container, probes, user volumes and ports).
func completeCluster(b *testing.B) *rayv1.RayCluster {
	b.Helper()
	data, err := os.ReadFile("../../config/samples/ray-cluster.complete.yaml")
	if err != nil {
		b.Fatal(err)
	}
	c := &rayv1.RayCluster{}
	if err := yaml.UnmarshalStrict(data, c); err != nil {
		b.Fatal(err)
	}
	c.Namespace, c.UID = "default", "uid-1"
	c.Spec.EnableInTreeAutoscaling = new(true)
	c.Spec.GcsFaultToleranceOptions = &rayv1.GcsFaultToleranceOptions{
		RedisAddress:  "redis:6379",
		RedisPassword: &rayv1.RedisCredential{Value: "pw"},
	}
	return c
}

func BenchmarkBuildHeadPod(b *testing.B) {
	c := completeCluster(b)
	if pod, err := BuildHeadPod(c, Options{}); err != nil || len(pod.Spec.Containers) != 2 {
		b.Fatalf("head Pod without the autoscaler sidecar (err %v)", err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := BuildHeadPod(c, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkBuildWorkerPod(b *testing.B) {
	c := completeCluster(b)
	idx := WorkerIndex{}
	if pod, err := BuildWorkerPod(c, 0, idx, Options{}); err != nil || len(pod.Spec.InitContainers) != 1 {
		b.Fatalf("worker Pod without the wait-gcs-ready init container (err %v)", err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := BuildWorkerPod(c, 0, idx, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
