package rayjob

import (
	"context"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/submitter"
)

// Labels and values put on the objects a RayJob creates.
const (
	// LabelSubmissionMode records the RayJob's submission mode on its RayCluster.
	LabelSubmissionMode = "ray.io/job-submission-mode"
	// OriginatedFromRayJob is the ray.io/originated-from-crd value of RayJob children.
	OriginatedFromRayJob = "RayJob"
)

// clusterKey is the name of the RayJob's RayCluster, fixed in status.
func clusterKey(job *rayv1.RayJob) types.NamespacedName {
	return types.NamespacedName{Namespace: job.Namespace, Name: job.Status.RayClusterName}
}

// usesClusterSelector reports whether the RayJob runs on an existing cluster,
// which it must never create, change or delete.
func usesClusterSelector(job *rayv1.RayJob) bool {
	return len(job.Spec.ClusterSelector) > 0
}

// getOrCreateCluster returns the RayJob's RayCluster, creating it from
// spec.rayClusterSpec when missing. A selected cluster must exist.
func (r *Reconciler) getOrCreateCluster(ctx context.Context, job *rayv1.RayJob) (*rayv1.RayCluster, error) {
	key := clusterKey(job)
	cluster := &rayv1.RayCluster{}
	err := r.Client.Get(ctx, key, cluster)
	if err == nil || !apierrors.IsNotFound(err) {
		return cluster, err
	}
	if usesClusterSelector(job) {
		r.event(job, corev1.EventTypeWarning, reasonRayClusterNotFound, actionCreate,
			"RayCluster %s set in the clusterSelector is not found. It must be created manually", key)
		return nil, fmt.Errorf("clusterSelector mode is enabled, but RayCluster %s is not found: %w", key, err)
	}
	if cluster, err = r.constructCluster(job); err != nil {
		return nil, err
	}
	if err := r.Client.Create(ctx, cluster); err != nil {
		r.event(job, corev1.EventTypeWarning, reasonFailedToCreateRayCluster, actionCreate, "Failed to create RayCluster %s: %v", key, err)
		return nil, fmt.Errorf("creating RayCluster %s: %w", key, err)
	}
	ctrl.LoggerFrom(ctx).Info("Created RayCluster", "rayCluster", key)
	r.event(job, corev1.EventTypeNormal, reasonCreatedRayCluster, actionCreate, "Created RayCluster %s", key)
	return cluster, nil
}

// constructCluster builds the RayCluster of a RayJob: its spec is
// spec.rayClusterSpec, its labels the RayJob's plus where it comes from, its
// annotations the RayJob's, and the RayJob owns it. In SidecarMode the head
// Pod also gets the submitter container, never restarts, and the cluster
// must not recreate a head Pod (a new head would not run the job again).
func (r *Reconciler) constructCluster(job *rayv1.RayJob) (*rayv1.RayCluster, error) {
	if job.Spec.RayClusterSpec == nil {
		return nil, fmt.Errorf("RayJob %s/%s has no rayClusterSpec", job.Namespace, job.Name)
	}
	labels := maps.Clone(job.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[rayv1.LabelOriginatedFromCRName] = job.Name
	labels[rayv1.LabelOriginatedFromCRD] = OriginatedFromRayJob
	labels[LabelSubmissionMode] = string(submissionMode(job))
	annotations := maps.Clone(job.Annotations)
	cluster := &rayv1.RayCluster{
		ObjectMeta: metav1.ObjectMeta{
			Name:        job.Status.RayClusterName,
			Namespace:   job.Namespace,
			Labels:      labels,
			Annotations: annotations,
		},
		Spec: *job.Spec.RayClusterSpec.DeepCopy(),
	}
	if err := controllerutil.SetControllerReference(job, cluster, r.Scheme); err != nil {
		return nil, err
	}
	if submissionMode(job) == rayv1.SidecarMode {
		if err := addSidecarSubmitter(job, cluster); err != nil {
			return nil, err
		}
	}
	return cluster, nil
}

// addSidecarSubmitter puts the SidecarMode submitter into the head Pod.
func addSidecarSubmitter(job *rayv1.RayJob, cluster *rayv1.RayCluster) error {
	sidecar, err := submitter.SidecarContainer(job, cluster)
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

// submissionMode is spec.submissionMode with its default.
func submissionMode(job *rayv1.RayJob) rayv1.JobSubmissionMode {
	if job.Spec.SubmissionMode == "" {
		return rayv1.K8sJobMode
	}
	return job.Spec.SubmissionMode
}
