package wrappers

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// Limits of the largest specs, as measured by
// test/integration/raycluster (TestLargestAcceptedRayClusters) against a
// real API server, whose etcd refuses requests over 1.5 MiB.
const (
	// LargestWorkerGroups is about the most worker groups of
	// LargeRayCluster (with a 53-character cluster name) that the API
	// server stores: 3,430 were measured; 30 fewer leave room for a status.
	LargestWorkerGroups = 3400
	// LargestRayStartParam is about the longest value of one head
	// rayStartParam of HugeParamRayCluster that the API server stores
	// (1,571,240 bytes measured).
	LargestRayStartParam = 1_560_000
)

// LargeRayCluster returns a RayCluster of groups worker groups, each
// with a name at the label-value limit (63 characters), one rayStartParam,
// resource requests and a label of 63 characters on its Pods. The first
// and the last group ask for one worker, the others for none (up to one),
// so that the spec is large but its Pods few.
func LargeRayCluster(name, namespace string, groups int) *rayv1.RayCluster {
	spec := MakeRayClusterSpec().Obj()
	for i := range groups {
		replicas := int32(0)
		if i == 0 || i == groups-1 {
			replicas = 1
		}
		template := podTemplate("ray-worker", DefaultRayVersion)
		template.Labels = map[string]string{"example.com/team": LongName("t", i, 63)}
		template.Spec.Containers[0].Resources.Requests = corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("2Gi"),
		}
		spec.WorkerGroupSpecs = append(spec.WorkerGroupSpecs, rayv1.WorkerGroupSpec{
			GroupName:      LongName("g", i, 63),
			Replicas:       ptr.To(replicas),
			MinReplicas:    ptr.To[int32](0),
			MaxReplicas:    ptr.To[int32](1),
			RayStartParams: map[string]string{"num-cpus": "1"},
			Template:       template,
		})
	}
	return MakeRayCluster(name, namespace).Spec(spec).Obj()
}

// HugeParamRayCluster returns a RayCluster with one worker whose head has
// a rayStartParam (a made-up flag) of size bytes.
func HugeParamRayCluster(name, namespace string, size int) *rayv1.RayCluster {
	spec := MakeRayClusterSpec().WorkerGroup("workers", 1, 0, 1).Obj()
	spec.HeadGroupSpec.RayStartParams["system-config"] = strings.Repeat("x", size)
	return MakeRayCluster(name, namespace).Spec(spec).Obj()
}

// LongName is prefix, the index i and filler characters, n characters in
// all: distinct names of the same length.
func LongName(prefix string, i, n int) string {
	s := fmt.Sprintf("%s%06d", prefix, i)
	return s + strings.Repeat("x", max(0, n-len(s)))
}
