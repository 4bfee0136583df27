package raycluster_test

import (
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/ray-operator/ray-operator/internal/features"
	"github.com/ray-operator/ray-operator/internal/testing/installcheck"
)

// collectorParts are the parts of a Ray Pod the history server collector
// decides: the containers' names, the collector container, the Ray
// container's mounts and the variables it ends with (the event export env
// comes last), and the Pod's volumes.
type collectorParts struct {
	Containers []string
	Collector  corev1.Container
	RayMounts  []corev1.VolumeMount
	RayEnvTail []corev1.EnvVar
	Volumes    []corev1.Volume
}

const eventExportVars = 5

func partsOf(t *testing.T, pod corev1.Pod) collectorParts {
	t.Helper()
	var p collectorParts
	for _, c := range pod.Spec.Containers {
		p.Containers = append(p.Containers, c.Name)
		if c.Name == "ray-history-collector" {
			p.Collector = corev1.Container{
				Name: c.Name, Image: c.Image, ImagePullPolicy: c.ImagePullPolicy,
				Resources: c.Resources, Env: c.Env, VolumeMounts: c.VolumeMounts,
			}
		}
	}
	ray := pod.Spec.Containers[0]
	if len(ray.Env) < eventExportVars {
		t.Fatalf("Ray container has %d variables", len(ray.Env))
	}
	p.RayMounts = ray.VolumeMounts
	p.RayEnvTail = ray.Env[len(ray.Env)-eventExportVars:]
	p.Volumes = pod.Spec.Volumes
	for i := range p.Collector.Env {
		if ref := p.Collector.Env[i].ValueFrom; ref != nil && ref.FieldRef != nil {
			ref.FieldRef.APIVersion = "" // defaulted by the API server
		}
	}
	return p
}

// kubeRayPods reads the Pods KubeRay built for the sample in namespace
// "default" and moves them to ns.
func kubeRayPods(t *testing.T, ns string) map[string]corev1.Pod {
	t.Helper()
	data, err := os.ReadFile("testdata/kuberay-historyserver-pods.yaml")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.ReplaceAll(string(data), ".default.svc.", "."+ns+".svc.")
	var pods map[string]corev1.Pod
	if err := yaml.UnmarshalStrict([]byte(text), &pods); err != nil {
		t.Fatal(err)
	}
	for _, pod := range pods {
		for i := range pod.Spec.Containers {
			for j, e := range pod.Spec.Containers[i].Env {
				if e.Name == "RAY_CLUSTER_NAMESPACE" && e.Value == "default" {
					pod.Spec.Containers[i].Env[j].Value = ns
				}
			}
		}
	}
	return pods
}

// TestHistoryServerCollectorMatchesKubeRay creates the history server
// sample and compares what the collector adds to our head and worker Pods
// with what KubeRay's operator builds for the same RayCluster
// (testdata/kuberay-historyserver-pods.yaml).
func TestHistoryServerCollectorMatchesKubeRay(t *testing.T) {
	w := newWorld(t, withGates(t, features.RayClusterHistoryServer))
	rc := installcheck.Sample(t, "ray-cluster.historyserver.yaml")
	w.Create(rc)
	want := kubeRayPods(t, w.NS)
	got := map[string]corev1.Pod{
		"head":   w.WaitPods(rc.Name, headLabels(), 1)[0],
		"worker": w.WaitPods(rc.Name, groupLabels("workergroup"), 1)[0],
	}
	for _, role := range []string{"head", "worker"} {
		if diff := cmp.Diff(partsOf(t, want[role]), partsOf(t, got[role])); diff != "" {
			t.Errorf("%s Pod: collector parts differ from KubeRay's (-KubeRay +ours):\n%s", role, diff)
		}
	}
}

// TestHistoryServerGateOff: without the gate the sample is refused and no
// Pod is created.
func TestHistoryServerGateOff(t *testing.T) {
	w := newWorld(t)
	rc := installcheck.Sample(t, "ray-cluster.historyserver.yaml")
	w.Create(rc)
	e := w.WaitEvent(rc.Name, "InvalidRayClusterSpec")
	if !strings.Contains(e.Note, "RayClusterHistoryServer feature gate is not enabled") {
		t.Errorf("event note = %q", e.Note)
	}
	if pods := w.Pods(rc.Name, nil); len(pods) != 0 {
		t.Errorf("%d Pods created with the gate off", len(pods))
	}
}
