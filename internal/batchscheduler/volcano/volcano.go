// Package volcano is the batch scheduler plugin for Volcano
// (--batch-scheduler=volcano). A RayCluster, or a RayJob with the
// RayCluster it creates, is one Volcano PodGroup (scheduling.volcano.sh/
// v1beta1) named ray-<name>-pg and owned by it: minMember is the head plus
// the desired workers (plus the minReplicas workers with autoscaling),
// minResources what those Pods request (a RayJob adds its submitter's
// requests, but not the submitter to minMember, which would deadlock: the
// submitter waits for the cluster). The queue, priority class and network
// topology come from the owner's labels, and every Pod names the PodGroup
// and its task in annotations and runs with schedulerName volcano.
package volcano

import (
	"context"
	"fmt"
	"maps"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	volcanobatchv1alpha1 "volcano.sh/apis/pkg/apis/batch/v1alpha1"
	volcanov1beta1 "volcano.sh/apis/pkg/apis/scheduling/v1beta1"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/batchscheduler"
	"github.com/ray-operator/ray-operator/internal/clustersize"
	"github.com/ray-operator/ray-operator/internal/submitter"
)

// Name is the plugin's name in --batch-scheduler and its Pods' schedulerName.
const Name = "volcano"

// Labels read on a RayCluster or RayJob, Volcano's.
const (
	// LabelQueueName is the PodGroup's queue; it is copied to the Pods.
	LabelQueueName = "volcano.sh/queue-name"
	// LabelNetworkTopologyMode is the PodGroup's networkTopology mode
	// (hard or soft).
	LabelNetworkTopologyMode = "volcano.sh/network-topology-mode"
	// LabelNetworkTopologyHighestTierAllowed is its highestTierAllowed, an
	// integer.
	LabelNetworkTopologyHighestTierAllowed = "volcano.sh/network-topology-highest-tier-allowed"
)

// Scheduler creates and resizes the PodGroups.
type Scheduler struct {
	podGroups batchscheduler.PodGroups
}

var (
	_ batchscheduler.Submitter         = (*Scheduler)(nil)
	_ batchscheduler.MetadataAdder     = (*Scheduler)(nil)
	_ batchscheduler.CompletionCleaner = (*Scheduler)(nil)
)

// Name is the Pods' schedulerName.
func (*Scheduler) Name() string { return Name }

// DoBatchSchedulingOnSubmission creates or resizes the PodGroup of a
// RayCluster (unless a RayJob created it: the RayJob's PodGroup covers it)
// or of a RayJob. A RayJob that selects an existing cluster is rejected.
func (v *Scheduler) DoBatchSchedulingOnSubmission(ctx context.Context, obj client.Object) error {
	switch o := obj.(type) {
	case *rayv1.RayCluster:
		if o.Labels[rayv1.LabelOriginatedFromCRD] == rayv1.KindRayJob {
			return nil
		}
		minMember, res := GangSize(&o.Spec)
		_, err := v.sync(ctx, o, rayv1.KindRayCluster, minMember, res)
		return err
	case *rayv1.RayJob:
		if o.Spec.RayClusterSpec == nil {
			return batchscheduler.Rejected(Name, "gang scheduling does not support RayJob %s/%s referencing an existing RayCluster", o.Namespace, o.Name)
		}
		minMember, res := GangSize(o.Spec.RayClusterSpec)
		_, err := v.sync(ctx, o, rayv1.KindRayJob, minMember, clustersize.Sum(res, SubmitterResources(o)))
		return err
	default:
		return fmt.Errorf("unsupported object type %T, only RayCluster and RayJob are supported", obj)
	}
}

// AddMetadataToChildResource copies the queue and priority class labels,
// names the PodGroup and the task (the group) in annotations and sets the
// schedulerName of Pods and Pod templates.
func (*Scheduler) AddMetadataToChildResource(_ context.Context, parent, child metav1.Object, groupName string) {
	batchscheduler.CopyLabel(parent, child, LabelQueueName, LabelQueueName)
	batchscheduler.CopyLabel(parent, child, batchscheduler.LabelPriorityClassName, batchscheduler.LabelPriorityClassName)
	batchscheduler.SetAnnotation(child, volcanov1beta1.KubeGroupNameAnnotationKey, PodGroupName(parent))
	batchscheduler.SetAnnotation(child, volcanobatchv1alpha1.TaskSpecKey, groupName)
	batchscheduler.SetSchedulerName(child, Name)
}

// CleanupOnCompletion resizes a RayJob's PodGroup to what its RayCluster
// still runs, so that Volcano stops reserving the rest of the queue: the
// cluster's gang without the submitter while it lives (suspended worker
// groups drop out), nothing once it is deleted or being deleted. A
// RayCluster's PodGroup goes with the RayCluster (owner reference), and a
// RayJob that never had a cluster name, or selects an existing cluster, has
// none.
func (v *Scheduler) CleanupOnCompletion(ctx context.Context, obj client.Object) (bool, error) {
	job, ok := obj.(*rayv1.RayJob)
	if !ok || job.Spec.UsesClusterSelector() || job.Status.RayClusterName == "" {
		return false, nil
	}
	var minMember int32
	res := corev1.ResourceList{}
	cluster := &rayv1.RayCluster{}
	key := client.ObjectKey{Namespace: job.Namespace, Name: job.Status.RayClusterName}
	switch err := v.podGroups.Client.Get(ctx, key, cluster); {
	case apierrors.IsNotFound(err):
		ctrl.LoggerFrom(ctx).Info("RayCluster not found; releasing the PodGroup", "rayCluster", key)
	case err != nil:
		return false, err
	case cluster.DeletionTimestamp.IsZero():
		minMember, res = GangSize(&cluster.Spec)
	}
	return v.sync(ctx, job, rayv1.KindRayJob, minMember, res)
}

// GangSize is the minMember and minResources of a cluster spec's PodGroup:
// the head and every desired worker, or with autoscaling the head and the
// minReplicas workers.
func GangSize(spec *rayv1.RayClusterSpec) (int32, corev1.ResourceList) {
	if spec.EnableInTreeAutoscaling != nil && *spec.EnableInTreeAutoscaling {
		return clustersize.MinWorkerPods(spec) + 1, clustersize.MinResources(spec)
	}
	return clustersize.DesiredWorkerPods(spec) + 1, clustersize.DesiredResources(spec)
}

// SubmitterResources is what a RayJob's submitter requests: the submitter
// Pod in K8sJobMode, the submitter container in SidecarMode (limits stand
// in for missing requests), nothing in the other modes.
func SubmitterResources(job *rayv1.RayJob) corev1.ResourceList {
	switch job.Spec.EffectiveSubmissionMode() {
	case rayv1.K8sJobMode:
		template := submitter.PodTemplate(job, job.Spec.RayClusterSpec)
		return clustersize.PodResources(&template.Spec)
	case rayv1.SidecarMode:
		return clustersize.PodResources(&corev1.PodSpec{Containers: []corev1.Container{submitter.DefaultContainer(job.Spec.RayClusterSpec)}})
	default:
		return corev1.ResourceList{}
	}
}

// PodGroupName is ray-<name>-pg, where name is the RayJob's for a cluster a
// RayJob created.
func PodGroupName(obj metav1.Object) string {
	name := obj.GetName()
	labels := obj.GetLabels()
	if labels[rayv1.LabelOriginatedFromCRD] == rayv1.KindRayJob && labels[rayv1.LabelOriginatedFromCRName] != "" {
		name = labels[rayv1.LabelOriginatedFromCRName]
	}
	return fmt.Sprintf("ray-%s-pg", name)
}

// BuildPodGroup is the PodGroup of owner (of kind ownerKind), controlled by
// it and carrying its annotations, with the queue, priority class and
// network topology of its labels. A highest-tier label that is not an
// integer is rejected.
func BuildPodGroup(owner metav1.Object, ownerKind string, minMember int32, res corev1.ResourceList) (*volcanov1beta1.PodGroup, error) {
	name := PodGroupName(owner)
	pg := &volcanov1beta1.PodGroup{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:       owner.GetNamespace(),
			Name:            name,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(owner, rayv1.GroupVersion.WithKind(ownerKind))},
			Annotations:     maps.Clone(owner.GetAnnotations()),
		},
		Spec: volcanov1beta1.PodGroupSpec{
			MinMember:    minMember,
			MinResources: &res,
		},
		Status: volcanov1beta1.PodGroupStatus{Phase: volcanov1beta1.PodGroupPending},
	}
	labels := owner.GetLabels()
	if mode, ok := labels[LabelNetworkTopologyMode]; ok {
		pg.Spec.NetworkTopology = &volcanov1beta1.NetworkTopologySpec{Mode: volcanov1beta1.NetworkTopologyMode(mode)}
		if tier, ok := labels[LabelNetworkTopologyHighestTierAllowed]; ok {
			n, err := strconv.Atoi(tier)
			if err != nil {
				return nil, batchscheduler.Rejected(Name, "failed to convert %s label to int: %v for podgroup %s in namespace %s",
					LabelNetworkTopologyHighestTierAllowed, err, name, owner.GetNamespace())
			}
			pg.Spec.NetworkTopology.HighestTierAllowed = &n
		}
	}
	if queue, ok := labels[LabelQueueName]; ok {
		pg.Spec.Queue = queue
	}
	if pc, ok := labels[batchscheduler.LabelPriorityClassName]; ok {
		pg.Spec.PriorityClassName = pc
	}
	return pg, nil
}

// sync creates owner's PodGroup, or sets the minMember and minResources of
// the existing one when they differ. It reports whether it wrote.
func (v *Scheduler) sync(ctx context.Context, owner client.Object, ownerKind string, minMember int32, res corev1.ResourceList) (bool, error) {
	log := ctrl.LoggerFrom(ctx).WithName(Name)
	pg := &volcanov1beta1.PodGroup{}
	key := client.ObjectKey{Namespace: owner.GetNamespace(), Name: PodGroupName(owner)}
	if err := v.podGroups.Client.Get(ctx, key, pg); err != nil {
		if !apierrors.IsNotFound(err) {
			return false, fmt.Errorf("getting PodGroup %s: %w", key, err)
		}
		return v.create(ctx, owner, ownerKind, minMember, res)
	}
	if pg.Spec.MinMember == minMember && pg.Spec.MinResources != nil && equalResources(*pg.Spec.MinResources, res) {
		return false, nil
	}
	pg.Spec.MinMember, pg.Spec.MinResources = minMember, &res
	if err := v.podGroups.Client.Update(ctx, pg); err != nil {
		return false, fmt.Errorf("updating PodGroup %s: %w", key, err)
	}
	log.Info("Updated PodGroup", "podGroup", klog.KObj(pg), "minMember", minMember)
	return true, nil
}

func (v *Scheduler) create(ctx context.Context, owner client.Object, ownerKind string, minMember int32, res corev1.ResourceList) (bool, error) {
	pg, err := BuildPodGroup(owner, ownerKind, minMember, res)
	if err != nil {
		return false, err
	}
	return v.podGroups.Create(ctx, pg, minMember)
}

// equalResources compares quantities by value, as Volcano's quota helpers.
func equalResources(a, b corev1.ResourceList) bool {
	if len(a) != len(b) {
		return false
	}
	for name, qa := range a {
		qb, ok := b[name]
		if !ok || qa.Cmp(qb) != 0 {
			return false
		}
	}
	return true
}

// Factory makes the Volcano plugin.
type Factory struct{}

var (
	_ batchscheduler.Factory              = Factory{}
	_ batchscheduler.SchemeAdder          = Factory{}
	_ batchscheduler.ReconcilerConfigurer = Factory{}
)

// New returns the plugin writing PodGroups with c.
func (Factory) New(_ context.Context, _ *rest.Config, c client.Client) (batchscheduler.Scheduler, error) {
	return &Scheduler{podGroups: batchscheduler.PodGroups{Client: c, Plugin: Name}}, nil
}

// AddToScheme adds Volcano's scheduling.volcano.sh/v1beta1 types.
func (Factory) AddToScheme(scheme *runtime.Scheme) error {
	return volcanov1beta1.AddToScheme(scheme)
}

// ConfigureReconciler makes the RayCluster controller watch the PodGroups
// its clusters own.
func (Factory) ConfigureReconciler(b *builder.Builder) *builder.Builder {
	return b.Owns(&volcanov1beta1.PodGroup{})
}
