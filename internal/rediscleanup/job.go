// Package rediscleanup builds the Job that deletes a GCS fault tolerant
// RayCluster's storage namespace from Redis once the cluster is being
// deleted (seed 004 §6).
package rediscleanup

import (
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/naming"
	"github.com/ray-operator/ray-operator/internal/ownerref"
	"github.com/ray-operator/ray-operator/internal/raypod"
)

const (
	// backoffLimit: a failed cleanup is not retried; the finalizer is removed
	// anyway and the user is told to clean up by hand.
	backoffLimit = int32(0)
	// activeDeadlineSeconds makes the cleanup best effort for 5 minutes.
	activeDeadlineSeconds = int64(300)
)

// scriptPrefix points users at the manual procedure, then connects to the
// first address in RAY_REDIS_ADDRESS (redis:// or rediss://, default redis://).
const scriptPrefix = "echo \"To get more information about manually deleting the storage namespace in Redis and removing the RayCluster's finalizer, " +
	"please check https://docs.ray.io/en/master/cluster/kubernetes/user-guides/kuberay-gcs-ft.html for more details.\" && " +
	"python -c \"from ray._private.gcs_utils import cleanup_redis_storage; " +
	"from urllib.parse import urlparse; import os; import sys; " +
	"redis_address = os.getenv('RAY_REDIS_ADDRESS', '').split(',')[0]; " +
	"redis_address = redis_address if '://' in redis_address else 'redis://' + redis_address; " +
	"parsed = urlparse(redis_address); "

// cleanupCall calls Ray's cleanup_redis_storage and exits non-zero when it
// reports failure; %s is the optional username argument.
const cleanupCall = "sys.exit(1) if not cleanup_redis_storage(host=parsed.hostname, port=parsed.port, %spassword=os.getenv('REDIS_PASSWORD', parsed.password or ''), " +
	"use_ssl=parsed.scheme=='rediss', storage_namespace=os.getenv('RAY_external_storage_namespace')) else None\""

const usernameArg = "username=os.getenv('REDIS_USERNAME', parsed.username), "

// BuildJob builds "<cluster>-redis-cleanup" from the head Pod the cluster
// would get: only the Ray container is kept, running the cleanup script with
// no probes, fixed 200m/256Mi resources (never a GPU), Redis retry settings
// that give it at least 60 seconds to connect, RestartPolicy Never, no
// retries and a 300 second deadline. Its labels are the head Pod's with
// ray.io/node-type=redis-cleanup.
func BuildJob(cluster *rayv1.RayCluster, opts raypod.Options) (*batchv1.Job, error) {
	// KubeRay's batch scheduler hook runs when a Pod is created, not when
	// the cleanup Job's template is built: the Job carries no gang metadata.
	opts.BatchScheduler = nil
	pod, err := raypod.BuildHeadPod(cluster, opts)
	if err != nil {
		return nil, err
	}
	pod.Labels[rayv1.LabelNodeType] = string(rayv1.RedisCleanupNode)
	ray := pod.Spec.Containers[rayv1.RayContainerIndex]
	configureCleanupContainer(&ray)
	pod.Spec.Containers = []corev1.Container{ray}
	// No certificate names the cleanup Pod's IP.
	pod.Spec.InitContainers = raypod.WithoutTLSWait(pod.Spec.InitContainers)
	pod.Spec.RestartPolicy = corev1.RestartPolicyNever

	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{
			Name:            naming.RedisCleanupJobName(cluster.Name),
			Namespace:       cluster.Namespace,
			Labels:          pod.Labels,
			Annotations:     pod.Annotations,
			OwnerReferences: []metav1.OwnerReference{ownerref.ForCluster(cluster)},
		},
		Spec: batchv1.JobSpec{
			BackoffLimit:          new(backoffLimit),
			ActiveDeadlineSeconds: new(activeDeadlineSeconds),
			Template:              corev1.PodTemplateSpec{ObjectMeta: pod.ObjectMeta, Spec: pod.Spec},
		},
	}, nil
}

// configureCleanupContainer turns the head's Ray container into the cleanup
// container.
func configureCleanupContainer(c *corev1.Container) {
	user := ""
	for _, e := range c.Env {
		if e.Name == raypod.EnvRedisUsername {
			user = usernameArg
		}
	}
	c.Command = []string{"/bin/bash", "-lc", "--"}
	c.Args = []string{scriptPrefix + fmt.Sprintf(cleanupCall, user)}
	c.LivenessProbe = nil
	c.ReadinessProbe = nil
	c.Env = append(c.Env,
		corev1.EnvVar{Name: "RAY_redis_db_connect_retries", Value: "120"},
		corev1.EnvVar{Name: "RAY_redis_db_connect_wait_milliseconds", Value: "500"},
	)
	res := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("200m"),
		corev1.ResourceMemory: resource.MustParse("256Mi"),
	}
	c.Resources = corev1.ResourceRequirements{Limits: res, Requests: res.DeepCopy()}
}
