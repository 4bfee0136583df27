package rayjob

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/batchscheduler"
	"github.com/ray-operator/ray-operator/internal/clusterowner"
	"github.com/ray-operator/ray-operator/internal/submitter"
)

// clusterKey is the name of the RayJob's RayCluster, fixed in status.
func clusterKey(job *rayv1.RayJob) types.NamespacedName {
	return types.NamespacedName{Namespace: job.Namespace, Name: job.Status.RayClusterName}
}

// getOrCreateCluster returns the RayJob's RayCluster, creating it from
// spec.rayClusterSpec when missing. A selected cluster must exist.
func (r *Reconciler) getOrCreateCluster(ctx context.Context, job *rayv1.RayJob) (*rayv1.RayCluster, error) {
	key := clusterKey(job)
	cluster, err := r.clusters.Get(ctx, key)
	if err != nil || cluster != nil {
		return cluster, err
	}
	if job.Spec.UsesClusterSelector() {
		r.events.Eventf(job, nil, corev1.EventTypeWarning, reasonRayClusterNotFound, actionCreate,
			"RayCluster %s set in the clusterSelector is not found. It must be created manually", key)
		return nil, fmt.Errorf("clusterSelector mode is enabled, but RayCluster %s is not found", key)
	}
	if cluster, err = constructCluster(job, r.sidecarRestartEnabled()); err != nil {
		return nil, err
	}
	if job.Spec.EffectiveSubmissionMode() == rayv1.K8sJobMode {
		// As in KubeRay, only a K8sJobMode cluster carries the RayJob's
		// scheduling metadata (Volcano's PodGroup name, YuniKorn's task
		// groups with the submitter).
		batchscheduler.AddMetadata(ctx, r.opts.BatchScheduler, job, cluster, "")
	}
	if err := r.clusters.Create(ctx, job, cluster); err != nil {
		return nil, err
	}
	return cluster, nil
}

// constructCluster builds the RayCluster of a RayJob (see
// clusterowner.Build), labelled with the submission mode. In SidecarMode the
// head Pod also gets the submitter container, never restarts (only the
// submitter container may, with sidecarRestart), and the cluster must not
// recreate a head Pod (a new head would not run the job again).
func constructCluster(job *rayv1.RayJob, sidecarRestart bool) (*rayv1.RayCluster, error) {
	if job.Spec.RayClusterSpec == nil {
		return nil, fmt.Errorf("RayJob %s/%s has no rayClusterSpec", job.Namespace, job.Name)
	}
	cluster := clusterowner.Build(job, rayv1.KindRayJob, job.Status.RayClusterName, job.Spec.RayClusterSpec)
	cluster.Labels[rayv1.LabelJobSubmissionMode] = string(job.Spec.EffectiveSubmissionMode())
	labelClusterAttempt(job, cluster)
	if job.Spec.EffectiveSubmissionMode() == rayv1.SidecarMode {
		if err := addSidecarSubmitter(job, cluster, sidecarRestart); err != nil {
			return nil, err
		}
	}
	return cluster, nil
}

// addSidecarSubmitter puts the SidecarMode submitter into the head Pod.
func addSidecarSubmitter(job *rayv1.RayJob, cluster *rayv1.RayCluster, restartOnFailure bool) error {
	sidecar, err := submitter.SidecarContainer(job, cluster, restartOnFailure)
	if err != nil {
		return err
	}
	podSpec := &cluster.Spec.HeadGroupSpec.Template.Spec
	podSpec.Containers = append(podSpec.Containers, sidecar)
	podSpec.RestartPolicy = corev1.RestartPolicyNever
	if cluster.Annotations == nil {
		cluster.Annotations = map[string]string{}
	}
	cluster.Annotations[rayv1.AnnotationDisableProvisionedHeadRestart] = "true"
	return nil
}
