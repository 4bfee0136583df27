package raycluster

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/clustersize"
)

// tpuResource is the extended resource name of Google TPUs.
const tpuResource corev1.ResourceName = "google.com/tpu"

// setDesiredResources sums the resources of every desired Pod: the head and
// desiredReplicas x numOfHosts Pods per worker group. GPUs of any vendor
// (resource names ending in "gpu") add up in desiredGPU.
func setDesiredResources(status *rayv1.RayClusterStatus, cluster *rayv1.RayCluster) {
	total := clustersize.DesiredResources(&cluster.Spec)
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
