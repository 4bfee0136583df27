package raycluster

import (
	"context"
	"fmt"
	"strconv"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/childwrite"
	"github.com/ray-operator/ray-operator/internal/gcsstorage"
	"github.com/ray-operator/ray-operator/internal/naming"
	"github.com/ray-operator/ray-operator/internal/passsteps"
	"github.com/ray-operator/ray-operator/internal/raypod"
	"github.com/ray-operator/ray-operator/internal/rediscleanup"
)

// DefaultGCSFTDeletionTimeout bounds how long the Redis cleanup may hold up
// the deletion of a cluster when the ray.io/gcs-ft-deletion-timeout
// annotation does not say otherwise (KubeRay v1.7).
const DefaultGCSFTDeletionTimeout = 300 * time.Second

// The GCS fault tolerance finalizer lifecycle. A cluster that keeps its GCS
// state in Redis leaves a storage namespace behind when it is deleted, so
// the finalizer ray.io/gcs-ft-redis-cleanup-finalizer holds the deletion
// until a cleanup Job has run:
//
//  1. The finalizer is added before anything else is created.
//  2. On deletion, head Pods then worker Pods are deleted, and the cleanup
//     waits for the head to be gone: a live GCS would keep writing.
//  3. The cleanup Job is created, and the finalizer is removed once it
//     finished; a failed Job is reported with an event, since the data must
//     then be removed by hand.
//  4. Whatever happens, the finalizer is force-removed once the deletion is
//     older than the timeout, with a warning naming the storage namespace:
//     a stuck cleanup must not block deletion (nor, say, Kueue's quota)
//     forever.

// wantsGCSFTFinalizer: clusters with GCS fault tolerance on Redis get the
// finalizer, unless ENABLE_GCS_FT_REDIS_CLEANUP=false.
func (r *Reconciler) wantsGCSFTFinalizer(cluster *rayv1.RayCluster) bool {
	if !r.opts.GCSFTRedisCleanup || !rayv1.IsGCSFaultToleranceEnabled(&cluster.Spec, cluster.Annotations) {
		return false
	}
	return !gcsstorage.Embedded(cluster)
}

// ensureGCSFTFinalizer is the first step of a pass: it adds the finalizer
// to a cluster that wants it (step 1). The pass then goes on with the
// updated object, which the status is compared with.
// A pass that could not add it writes no status, as KubeRay's.
func (r *Reconciler) ensureGCSFTFinalizer(ctx context.Context, s *scope) (passsteps.Result, error) {
	cluster := s.cluster
	if controllerutil.ContainsFinalizer(cluster, rayv1.GCSFaultToleranceRedisCleanupFinalizer) || !r.wantsGCSFTFinalizer(cluster) {
		return passsteps.Result{}, nil
	}
	ctrl.LoggerFrom(ctx).Info("GCS fault tolerance is on: adding a finalizer so that Redis is cleaned up once the RayCluster is deleted",
		"finalizer", rayv1.GCSFaultToleranceRedisCleanupFinalizer)
	controllerutil.AddFinalizer(cluster, rayv1.GCSFaultToleranceRedisCleanupFinalizer)
	if err := r.Client.Update(ctx, cluster); err != nil {
		s.noStatus = true
		return passsteps.Result{}, fmt.Errorf("adding the finalizer %s: %w", rayv1.GCSFaultToleranceRedisCleanupFinalizer, err)
	}
	s.original = cluster.DeepCopy()
	return passsteps.Result{}, nil
}

// finalize handles a cluster being deleted. Without the finalizer there is
// nothing to do: owner references let the garbage collector remove the
// children. With it, steps 2 to 4 run, whether or not the spec is valid and
// whether or not the cleanup is still enabled, so that no cluster is left
// stuck. A cluster moved from Redis to the embedded RocksDB backend keeps the
// finalizer it got on Redis; it has no Redis left to clean, so the finalizer
// is just removed, as KubeRay does.
func (r *Reconciler) finalize(ctx context.Context, cluster *rayv1.RayCluster) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(cluster, rayv1.GCSFaultToleranceRedisCleanupFinalizer) {
		return ctrl.Result{}, nil
	}
	if gcsstorage.Embedded(cluster) {
		ctrl.LoggerFrom(ctx).Info("Removing the stale Redis cleanup finalizer of a RayCluster on the embedded GCS backend",
			"finalizer", rayv1.GCSFaultToleranceRedisCleanupFinalizer)
		return ctrl.Result{}, r.removeGCSFTFinalizer(ctx, cluster)
	}
	return r.cleanUpRedis(ctx, cluster)
}

// cleanUpRedis runs steps 2 to 4 of the lifecycle.
func (r *Reconciler) cleanUpRedis(ctx context.Context, cluster *rayv1.RayCluster) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	remaining := gcsFTDeletionTimeout(cluster) - r.Clock.Since(cluster.DeletionTimestamp.Time)
	if remaining <= 0 {
		r.events.Eventf(cluster, nil, corev1.EventTypeWarning, reasonForceDeletedStuckCluster, actionFinalize,
			"The Redis cleanup of RayCluster %s/%s did not finish within %v; removing the finalizer %s anyway. "+
				"The storage namespace %q may have to be deleted from Redis by hand.",
			cluster.Namespace, cluster.Name, gcsFTDeletionTimeout(cluster), rayv1.GCSFaultToleranceRedisCleanupFinalizer,
			raypod.ExternalStorageNamespace(cluster))
		return ctrl.Result{}, r.removeGCSFTFinalizer(ctx, cluster)
	}
	heads, _, err := r.deleteAllPods(ctx, cluster, headPodLabels)
	if err != nil {
		return ctrl.Result{}, err
	}
	if _, _, err := r.deleteAllPods(ctx, cluster, workerPodLabels); err != nil {
		return ctrl.Result{}, err
	}
	if len(heads) > 0 {
		log.Info("Waiting for the head Pod to terminate before cleaning up Redis: the GCS would keep writing to it",
			"pod", heads[0].Name, "storageNamespace", raypod.ExternalStorageNamespace(cluster))
		return ctrl.Result{RequeueAfter: min(headTerminationRequeue, remaining)}, nil
	}
	job := &batchv1.Job{}
	err = r.Client.Get(ctx, client.ObjectKey{Namespace: cluster.Namespace, Name: naming.RedisCleanupJobName(cluster.Name)}, job)
	switch {
	case apierrors.IsNotFound(err):
		return ctrl.Result{RequeueAfter: min(shortRequeue, remaining)}, r.createRedisCleanupJob(ctx, cluster)
	case err != nil:
		return ctrl.Result{}, err
	}
	finished, failed := jobFinished(job)
	if !finished {
		return ctrl.Result{RequeueAfter: min(shortRequeue, remaining)}, nil
	}
	if failed {
		r.events.Eventf(cluster, nil, corev1.EventTypeWarning, reasonRedisCleanupJobFailed, actionFinalize,
			"The Redis cleanup Job %s/%s failed; the storage namespace %q must be deleted from Redis by hand. "+
				"See https://docs.ray.io/en/master/cluster/kubernetes/user-guides/kuberay-gcs-ft.html",
			job.Namespace, job.Name, raypod.ExternalStorageNamespace(cluster))
	}
	return ctrl.Result{}, r.removeGCSFTFinalizer(ctx, cluster)
}

func (r *Reconciler) createRedisCleanupJob(ctx context.Context, cluster *rayv1.RayCluster) error {
	job, err := rediscleanup.BuildJob(cluster, r.opts.Pod)
	if err != nil {
		return err
	}
	ev := childwrite.Noted(childwrite.Create, childwrite.Noun("Redis cleanup Job", job),
		reasonCreatedRedisCleanupJob, reasonFailedToCreateRedisCleanupJob)
	ev.ErrorAfter = ", "
	return r.Children().Create(ctx, cluster, job, ev, childwrite.IgnoreAlreadyExists())
}

func (r *Reconciler) removeGCSFTFinalizer(ctx context.Context, cluster *rayv1.RayCluster) error {
	controllerutil.RemoveFinalizer(cluster, rayv1.GCSFaultToleranceRedisCleanupFinalizer)
	return r.Client.Update(ctx, cluster)
}

// gcsFTDeletionTimeout reads ray.io/gcs-ft-deletion-timeout (whole seconds,
// not negative); anything else means the default.
func gcsFTDeletionTimeout(cluster *rayv1.RayCluster) time.Duration {
	if v, ok := cluster.Annotations[rayv1.AnnotationGCSFTDeletionTimeout]; ok {
		if n, err := strconv.Atoi(v); err == nil && n >= 0 {
			return time.Duration(n) * time.Second
		}
	}
	return DefaultGCSFTDeletionTimeout
}

// jobFinished reports whether a Job is Complete or Failed, and which.
func jobFinished(job *batchv1.Job) (finished, failed bool) {
	for _, c := range job.Status.Conditions {
		if c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Type {
		case batchv1.JobComplete:
			return true, false
		case batchv1.JobFailed:
			return true, true
		}
	}
	return false, false
}
