package raypod

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// newCluster returns a small RayCluster with one worker group "small";
// mutators adjust it for a test case.
func newCluster(mutators ...func(*rayv1.RayCluster)) *rayv1.RayCluster {
	c := &rayv1.RayCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "raycluster", Namespace: "default", UID: "uid-1"},
		Spec: rayv1.RayClusterSpec{
			RayVersion: "2.46.0",
			HeadGroupSpec: rayv1.HeadGroupSpec{
				RayStartParams: map[string]string{},
				Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name:  "ray-head",
					Image: "rayproject/ray:2.46.0",
					Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{
						corev1.ResourceCPU:    resource.MustParse("1"),
						corev1.ResourceMemory: resource.MustParse("2G"),
					}},
				}}}},
			},
			WorkerGroupSpecs: []rayv1.WorkerGroupSpec{{
				GroupName:      "small",
				RayStartParams: map[string]string{},
				NumOfHosts:     1,
				Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name:  "ray-worker",
					Image: "rayproject/ray:2.46.0",
				}}}},
			}},
		},
	}
	for _, m := range mutators {
		m(c)
	}
	return c
}

func headContainer(c *rayv1.RayCluster) *corev1.Container {
	return &c.Spec.HeadGroupSpec.Template.Spec.Containers[0]
}

func workerContainer(c *rayv1.RayCluster) *corev1.Container {
	return &c.Spec.WorkerGroupSpecs[0].Template.Spec.Containers[0]
}

func buildHead(t *testing.T, c *rayv1.RayCluster, opts Options) *corev1.Pod {
	t.Helper()
	pod, err := BuildHeadPod(c, opts)
	if err != nil {
		t.Fatalf("BuildHeadPod: %v", err)
	}
	return pod
}

func buildWorker(t *testing.T, c *rayv1.RayCluster, idx WorkerIndex, opts Options) *corev1.Pod {
	t.Helper()
	pod, err := BuildWorkerPod(c, 0, idx, opts)
	if err != nil {
		t.Fatalf("BuildWorkerPod: %v", err)
	}
	return pod
}

// env returns the variables of a container as name -> EnvVar for lookups.
func env(c corev1.Container) map[string]corev1.EnvVar {
	out := map[string]corev1.EnvVar{}
	for _, e := range c.Env {
		out[e.Name] = e
	}
	return out
}

// envNames lists variable names in order, to check KubeRay's ordering.
func envNames(c corev1.Container) []string {
	names := make([]string, 0, len(c.Env))
	for _, e := range c.Env {
		names = append(names, e.Name)
	}
	return names
}

func startCmd(pod *corev1.Pod) string {
	return env(pod.Spec.Containers[0])[EnvGeneratedRayStartCmd].Value
}
