package e2eutil

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// RayClusterBuilder builds the RayClusters the e2e tests start by hand (head
// death, node lost, node down, raylet crash): a head and worker groups on
// one Ray release, each container with its requests and limits, and what
// a test changes about every group (the grace period, tolerations of a
// lost node). NewRayCluster starts one; Obj and Spec end it.
type RayClusterBuilder struct {
	name, version string
	head          group
	workers       []group
	grace         *int64
	tolerations   []corev1.Toleration
}

// group is one group's Ray start parameters and container resources.
type group struct {
	name             string
	replicas         int32
	params           map[string]string
	requests, limits corev1.ResourceList
}

// NewRayCluster starts a RayCluster name on Ray rayVersion (its image
// rayproject/ray:<rayVersion>).
func NewRayCluster(name, rayVersion string) *RayClusterBuilder {
	return &RayClusterBuilder{name: name, version: rayVersion}
}

// Resources is a container's cpu and memory, as a manifest writes them.
func Resources(cpu, memory string) corev1.ResourceList {
	return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory)}
}

// Head sets the head's num-cpus and its container's requests and limits.
func (b *RayClusterBuilder) Head(numCPUs string, requests, limits corev1.ResourceList) *RayClusterBuilder {
	b.head = group{params: map[string]string{"num-cpus": numCPUs}, requests: requests, limits: limits}
	return b
}

// Worker adds a worker group of fixed size (min = max = replicas) with
// num-cpus and its container's requests and limits.
func (b *RayClusterBuilder) Worker(name string, replicas int32, numCPUs string, requests, limits corev1.ResourceList) *RayClusterBuilder {
	b.workers = append(b.workers, group{name: name, replicas: replicas, params: map[string]string{"num-cpus": numCPUs}, requests: requests, limits: limits})
	return b
}

// WorkerResources sets the custom Ray resources (rayStartParams'
// resources, a JSON object quoted for ray start) of the last worker group.
func (b *RayClusterBuilder) WorkerResources(quotedJSON string) *RayClusterBuilder {
	b.workers[len(b.workers)-1].params["resources"] = quotedJSON
	return b
}

// GracePeriod sets every Pod's terminationGracePeriodSeconds.
func (b *RayClusterBuilder) GracePeriod(seconds int64) *RayClusterBuilder {
	b.grace = ptr.To(seconds)
	return b
}

// TolerateNodeLoss has every Pod tolerate an unreachable or not-ready
// node for seconds instead of the API server's default 300 s, so that the
// taint manager evicts them soon after the node is lost.
func (b *RayClusterBuilder) TolerateNodeLoss(seconds int64) *RayClusterBuilder {
	b.tolerations = nil
	for _, key := range []string{corev1.TaintNodeUnreachable, corev1.TaintNodeNotReady} {
		b.tolerations = append(b.tolerations, corev1.Toleration{
			Key: key, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To(seconds),
		})
	}
	return b
}

// Obj is the RayCluster.
func (b *RayClusterBuilder) Obj() *rayv1.RayCluster {
	return &rayv1.RayCluster{
		TypeMeta:   metav1.TypeMeta{APIVersion: rayv1.GroupVersion.String(), Kind: "RayCluster"},
		ObjectMeta: metav1.ObjectMeta{Name: b.name},
		Spec:       *b.Spec(),
	}
}

// Spec is the RayCluster's spec, as a RayJob's rayClusterSpec.
func (b *RayClusterBuilder) Spec() *rayv1.RayClusterSpec {
	spec := &rayv1.RayClusterSpec{
		RayVersion: b.version,
		HeadGroupSpec: rayv1.HeadGroupSpec{
			RayStartParams: b.head.params,
			Template:       b.template("ray-head", b.head),
		},
	}
	for _, w := range b.workers {
		spec.WorkerGroupSpecs = append(spec.WorkerGroupSpecs, rayv1.WorkerGroupSpec{
			GroupName:      w.name,
			Replicas:       ptr.To(w.replicas),
			MinReplicas:    ptr.To(w.replicas),
			MaxReplicas:    ptr.To(w.replicas),
			RayStartParams: w.params,
			Template:       b.template("ray-worker", w),
		})
	}
	return spec
}

// template is a group's Pod template: one container of the release's
// image.
func (b *RayClusterBuilder) template(container string, g group) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		TerminationGracePeriodSeconds: b.grace,
		Tolerations:                   b.tolerations,
		Containers: []corev1.Container{{
			Name:      container,
			Image:     "rayproject/ray:" + b.version,
			Resources: corev1.ResourceRequirements{Requests: g.requests, Limits: g.limits},
		}},
	}}
}

// HTTPModeRayJob is a RayJob name that submits entrypoint through the
// dashboard's HTTP API (submissionMode HTTPMode) to a cluster of spec.
func HTTPModeRayJob(name, entrypoint string, spec *rayv1.RayClusterSpec) *rayv1.RayJob {
	return &rayv1.RayJob{
		TypeMeta:   metav1.TypeMeta{APIVersion: rayv1.GroupVersion.String(), Kind: "RayJob"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: rayv1.RayJobSpec{
			SubmissionMode: rayv1.HTTPMode,
			Entrypoint:     entrypoint,
			RayClusterSpec: spec,
		},
	}
}
