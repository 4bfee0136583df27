// Package schedulerplugins is the batch scheduler plugin for the
// coscheduling plugin of kubernetes-sigs/scheduler-plugins
// (--batch-scheduler=scheduler-plugins). Pods run with schedulerName
// scheduler-plugins-scheduler, the name of that project's second-scheduler
// deployment. A RayCluster with the ray.io/gang-scheduling-enabled label is
// one PodGroup (scheduling.x-k8s.io/v1alpha1) named as the cluster, which
// its Pods join with the scheduling.x-k8s.io/pod-group label. Only
// RayClusters are supported: RayJobs are rejected.
package schedulerplugins

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	schedv1alpha1 "sigs.k8s.io/scheduler-plugins/apis/scheduling/v1alpha1"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/batchscheduler"
	"github.com/ray-operator/ray-operator/internal/clustersize"
)

const (
	// Name is the plugin's name in --batch-scheduler.
	Name = "scheduler-plugins"
	// SchedulerName is the Pods' schedulerName: scheduler-plugins' own
	// default for its second scheduler.
	SchedulerName = "scheduler-plugins-scheduler"
	// LabelPodGroup names a Pod's PodGroup.
	LabelPodGroup = "scheduling.x-k8s.io/pod-group"
)

// Scheduler creates the PodGroups.
type Scheduler struct {
	podGroups batchscheduler.PodGroups
}

var (
	_ batchscheduler.Submitter     = (*Scheduler)(nil)
	_ batchscheduler.MetadataAdder = (*Scheduler)(nil)
)

// Name is the Pods' schedulerName.
func (*Scheduler) Name() string { return SchedulerName }

// DoBatchSchedulingOnSubmission creates the PodGroup of a gang-scheduled
// RayCluster when it does not exist; an existing one is left as it is.
func (k *Scheduler) DoBatchSchedulingOnSubmission(ctx context.Context, obj client.Object) error {
	cluster, ok := obj.(*rayv1.RayCluster)
	if !ok {
		return batchscheduler.Rejected(Name, "currently only RayCluster is supported, got %T", obj)
	}
	if !batchscheduler.GangSchedulingEnabled(cluster) {
		return nil
	}
	key := client.ObjectKeyFromObject(cluster)
	if err := k.podGroups.Client.Get(ctx, key, &schedv1alpha1.PodGroup{}); err == nil || !apierrors.IsNotFound(err) {
		return err
	}
	pg := BuildPodGroup(cluster)
	_, err := k.podGroups.Create(ctx, pg, pg.Spec.MinMember)
	return err
}

// AddMetadataToChildResource puts gang-scheduled children into the
// parent's PodGroup and sets the schedulerName.
func (*Scheduler) AddMetadataToChildResource(_ context.Context, parent, child metav1.Object, _ string) {
	if batchscheduler.GangSchedulingEnabled(parent) {
		labels := child.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		labels[LabelPodGroup] = parent.GetName()
		child.SetLabels(labels)
	}
	batchscheduler.SetSchedulerName(child, SchedulerName)
}

// BuildPodGroup is the PodGroup of a cluster: its name, owned by it,
// minMember the head and the desired workers, minResources what they
// request. As in KubeRay, autoscaling does not lower the gang to
// minReplicas.
func BuildPodGroup(cluster *rayv1.RayCluster) *schedv1alpha1.PodGroup {
	return &schedv1alpha1.PodGroup{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: cluster.Namespace,
			Name:      cluster.Name,
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: rayv1.GroupVersion.String(),
				Kind:       rayv1.KindRayCluster,
				Name:       cluster.Name,
				UID:        cluster.UID,
			}},
		},
		Spec: schedv1alpha1.PodGroupSpec{
			MinMember:    clustersize.DesiredWorkerPods(&cluster.Spec) + 1,
			MinResources: clustersize.DesiredResources(&cluster.Spec),
		},
	}
}

// Factory makes the scheduler-plugins plugin.
type Factory struct{}

var (
	_ batchscheduler.Factory     = Factory{}
	_ batchscheduler.SchemeAdder = Factory{}
)

// New returns the plugin writing PodGroups with c.
func (Factory) New(_ context.Context, _ *rest.Config, c client.Client) (batchscheduler.Scheduler, error) {
	return &Scheduler{podGroups: batchscheduler.PodGroups{Client: c, Plugin: Name}}, nil
}

// AddToScheme adds scheduler-plugins' scheduling.x-k8s.io/v1alpha1 types.
func (Factory) AddToScheme(scheme *runtime.Scheme) error {
	return schedv1alpha1.AddToScheme(scheme)
}
