package raypod

import (
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/naming"
)

// WorkerIndex places a worker Pod in its group. The indices are only
// written as labels when Options.MultiHostIndexing is on; ReplicaName and
// HostIndex only for multi-host groups (numOfHosts > 1).
type WorkerIndex struct {
	// ReplicaIndex is the ordered index of the replica in the group.
	ReplicaIndex int
	// ReplicaName identifies the replica (slice) the Pod belongs to, see
	// naming.WorkerReplicaName.
	ReplicaName string
	// HostIndex is the index of the Pod inside its replica.
	HostIndex int
}

// BuildWorkerPod builds one worker Pod of the group at groupIndex in
// cluster.Spec.WorkerGroupSpecs. It returns an error for an out-of-range
// index or a template without containers.
func BuildWorkerPod(cluster *rayv1.RayCluster, groupIndex int, index WorkerIndex, opts Options) (*corev1.Pod, error) {
	if groupIndex < 0 || groupIndex >= len(cluster.Spec.WorkerGroupSpecs) {
		return nil, fmt.Errorf("worker group index %d out of range", groupIndex)
	}
	group := &cluster.Spec.WorkerGroupSpecs[groupIndex]
	b, err := newPodBuild(cluster, opts, rayv1.WorkerNode, group.GroupName, groupSpec{
		template:       &group.Template,
		rayStartParams: group.RayStartParams,
		resources:      group.Resources,
		labels:         group.Labels,
	})
	if err != nil {
		return nil, err
	}
	if !opts.DisableInitContainerInjection {
		b.pod.Spec.InitContainers = append(b.pod.Spec.InitContainers, b.waitGCSReadyContainer())
	}
	b.pod.Name = ""
	b.pod.GenerateName = naming.WorkerPodGenerateName(cluster.Name, group.GroupName)
	if opts.MultiHostIndexing {
		b.setIndexLabels(group.NumOfHosts, index)
	}
	setDefaultParams(b.params, rayv1.WorkerNode, b.fqdn+":"+b.headPort)
	b.initAnnotations()
	if rayv1.IsGCSFaultToleranceEnabled(&cluster.Spec, cluster.Annotations) {
		addEnvIfMissing(b.rayContainer(), corev1.EnvVar{Name: EnvGcsReconnectTimeoutS, Value: workerGcsReconnectTimeoutS})
	}
	b.addMetricsPort()
	if AutoscalingEnabled(cluster) && autoscalerVersion(cluster) == rayv1.AutoscalerVersionV2 {
		b.pod.Spec.RestartPolicy = corev1.RestartPolicyNever
	}
	if rayv1.IsAuthEnabled(&cluster.Spec) {
		b.configureTokenAuth()
	}
	b.configureTLS()
	b.addCollector()
	b.pod.Spec.Containers = append(b.pod.Spec.Containers, opts.WorkerSidecarContainers...)
	return b.finish(), nil
}

func (b *podBuild) setIndexLabels(numOfHosts int32, index WorkerIndex) {
	b.pod.Labels[rayv1.LabelWorkerReplicaIndex] = strconv.Itoa(index.ReplicaIndex)
	if numOfHosts > 1 {
		b.pod.Labels[rayv1.LabelWorkerReplicaName] = index.ReplicaName
		b.pod.Labels[rayv1.LabelReplicaHostIndex] = strconv.Itoa(index.HostIndex)
	}
}

// waitGCSReadyScript polls `ray health-check` every 5 seconds until GCS on
// the head answers, quietly for the first two minutes.
const waitGCSReadyScript = `
					SECONDS=0
					while true; do
						if (( SECONDS <= 120 )); then
							if ray health-check --address %[1]s:%[2]s > /dev/null 2>&1; then
								echo "GCS is ready."
								break
							fi
							echo "$SECONDS seconds elapsed: Waiting for GCS to be ready."
						else
							if ray health-check --address %[1]s:%[2]s; then
								echo "GCS is ready. Any error messages above can be safely ignored."
								break
							fi
							echo "$SECONDS seconds elapsed: Still waiting for GCS to be ready. For troubleshooting, refer to the FAQ at https://docs.ray.io/en/master/cluster/kubernetes/troubleshooting.html."
						fi
						sleep 5
					done
				`

// waitGCSReadyContainer keeps the worker from starting before GCS is up. It
// reuses the Ray container's image, security context, environment and
// mounts (TLS settings may live there) with fixed small resources, so that
// quotas and GPU-less init container rules are satisfied.
func (b *podBuild) waitGCSReadyContainer() corev1.Container {
	ray := b.rayContainer().DeepCopy()
	res := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("200m"),
		corev1.ResourceMemory: resource.MustParse("256Mi"),
	}
	return corev1.Container{
		Name:            waitGCSReadyName,
		Image:           ray.Image,
		ImagePullPolicy: ray.ImagePullPolicy,
		Command:         b.opts.shellCommand(),
		Args:            []string{fmt.Sprintf(waitGCSReadyScript, b.fqdn, b.headPort)},
		SecurityContext: ray.SecurityContext,
		Env:             ray.Env,
		VolumeMounts:    ray.VolumeMounts,
		Resources:       corev1.ResourceRequirements{Limits: res, Requests: res.DeepCopy()},
	}
}
