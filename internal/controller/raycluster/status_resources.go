package raycluster

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// tpuResource is the extended resource name of Google TPUs.
const tpuResource corev1.ResourceName = "google.com/tpu"

// setDesiredResources sums the resources of every desired Pod: the head and
// desiredReplicas x numOfHosts Pods per worker group. GPUs of any vendor
// (resource names ending in "gpu") add up in desiredGPU.
func setDesiredResources(status *rayv1.RayClusterStatus, cluster *rayv1.RayCluster) {
	total := corev1.ResourceList{}
	addTimes(total, podResources(&cluster.Spec.HeadGroupSpec.Template.Spec), 1)
	for i := range cluster.Spec.WorkerGroupSpecs {
		g := &cluster.Spec.WorkerGroupSpecs[i]
		addTimes(total, podResources(&g.Template.Spec), int64(timesHosts(desiredReplicas(g), g)))
	}
	gpus := resource.Quantity{}
	for name, q := range total {
		if strings.HasSuffix(string(name), "gpu") {
			gpus.Add(q)
		}
	}
	status.DesiredCPU = total[corev1.ResourceCPU]
	status.DesiredMemory = total[corev1.ResourceMemory]
	status.DesiredGPU = gpus
	status.DesiredTPU = total[tpuResource]
}

// podResources sums the containers' requests, taking the limit where a
// request is missing (as the API server defaults it).
func podResources(spec *corev1.PodSpec) corev1.ResourceList {
	sum := corev1.ResourceList{}
	for _, c := range spec.Containers {
		for name, q := range c.Resources.Limits {
			if _, ok := c.Resources.Requests[name]; !ok {
				add(sum, name, q)
			}
		}
		for name, q := range c.Resources.Requests {
			add(sum, name, q)
		}
	}
	return sum
}

func addTimes(total, list corev1.ResourceList, times int64) {
	for name, q := range list {
		scaled := q.DeepCopy()
		scaled.Mul(times)
		add(total, name, scaled)
	}
}

func add(list corev1.ResourceList, name corev1.ResourceName, q resource.Quantity) {
	sum := list[name]
	sum.Add(q)
	list[name] = sum
}
