// Package kuberneteswas is the batch scheduler of the KubernetesWAS feature
// gate: gang scheduling of a RayCluster by the default kube-scheduler
// through Kubernetes' workload-aware scheduling API, scheduling.k8s.io/
// v1alpha2 (Kubernetes 1.36 with the GenericWorkload and GangScheduling
// feature gates), instead of a third-party scheduler's PodGroup.
//
// A RayCluster labeled ray.io/gang-scheduling-enabled=true and without
// autoscaling is one Workload named as the cluster, with one PodGroup
// template "cluster", and one PodGroup <cluster>-cluster made from it; both
// gang-schedule the head and every desired worker (minCount) and are owned
// by the cluster. Every Pod names the PodGroup in spec.schedulingGroup and
// runs with the default scheduler, which binds none of them until all
// minCount fit. Both objects are immutable: when minCount changes they are
// deleted (PodGroup first, guarded by UID preconditions) and made again on
// later passes. A cluster that stops qualifying loses them. RayJobs are left
// alone: the RayCluster a RayJob makes is handled as any other.
package kuberneteswas

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/batchscheduler"
	scheduling "github.com/ray-operator/ray-operator/internal/batchscheduler/kuberneteswas/schedulingv1alpha2"
)

// Name is the plugin's name, KubeRay's, in logs and events.
const Name = "kubernetes-was-v1alpha2"

// Factory makes the Scheduler. It is chosen by the KubernetesWAS feature
// gate, not by --batch-scheduler.
type Factory struct{}

var (
	_ batchscheduler.Factory              = Factory{}
	_ batchscheduler.SchemeAdder          = Factory{}
	_ batchscheduler.ReconcilerConfigurer = Factory{}
)

// New returns the Scheduler writing with c, once the cluster behind cfg is
// found to serve scheduling.k8s.io/v1alpha2 (a nil cfg skips the check).
func (Factory) New(_ context.Context, cfg *rest.Config, c client.Client) (batchscheduler.Scheduler, error) {
	if cfg != nil {
		if err := served(cfg); err != nil {
			return nil, err
		}
	}
	return &Scheduler{c: c}, nil
}

// served fails unless the API server serves scheduling.k8s.io/v1alpha2.
func served(cfg *rest.Config) error {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return fmt.Errorf("creating discovery client: %w", err)
	}
	if _, err := dc.ServerResourcesForGroupVersion(scheduling.GroupVersion.String()); err != nil {
		return fmt.Errorf("%s API is not available: %w", scheduling.GroupVersion, err)
	}
	return nil
}

// AddToScheme registers Workload and PodGroup.
func (Factory) AddToScheme(s *runtime.Scheme) error { return scheduling.AddToScheme(s) }

// ConfigureReconciler makes the RayCluster controller watch the Workloads
// and PodGroups it owns, so that a deletion it waits for wakes it up.
func (Factory) ConfigureReconciler(b *builder.Builder) *builder.Builder {
	return b.Owns(&scheduling.Workload{}).Owns(&scheduling.PodGroup{})
}

// Scheduler keeps each RayCluster's Workload and PodGroup.
type Scheduler struct {
	c client.Client
}

var (
	_ batchscheduler.Submitter         = (*Scheduler)(nil)
	_ batchscheduler.MetadataAdder     = (*Scheduler)(nil)
	_ batchscheduler.CompletionCleaner = (*Scheduler)(nil)
)

// Name is the plugin's name; the Pods run with the default scheduler.
func (*Scheduler) Name() string { return Name }

// DoBatchSchedulingOnSubmission makes the RayCluster's Workload and
// PodGroup match it, or removes them when the cluster does not qualify
// (SkipReason). Other objects are ignored.
func (s *Scheduler) DoBatchSchedulingOnSubmission(ctx context.Context, obj client.Object) error {
	cluster, ok := obj.(*rayv1.RayCluster)
	if !ok {
		return nil
	}
	if reason := SkipReason(cluster); reason != "" {
		ctrl.LoggerFrom(ctx).WithName(Name).V(1).Info("Skipping Kubernetes workload-aware scheduling", "reason", reason)
		_, err := s.deleteAll(ctx, cluster)
		return err
	}
	if err := s.syncWorkload(ctx, cluster, BuildWorkload(cluster)); err != nil {
		return err
	}
	return s.syncPodGroup(ctx, cluster, BuildPodGroup(cluster))
}

// AddMetadataToChildResource makes a qualifying RayCluster's Pods (and Pod
// templates) join its PodGroup under the default scheduler.
func (*Scheduler) AddMetadataToChildResource(_ context.Context, parent, child metav1.Object, _ string) {
	cluster, ok := parent.(*rayv1.RayCluster)
	if !ok || SkipReason(cluster) != "" {
		return
	}
	batchscheduler.SetSchedulerName(child, corev1.DefaultSchedulerName)
	group := &corev1.PodSchedulingGroup{PodGroupName: new(PodGroupName(cluster.Name))}
	switch c := child.(type) {
	case *corev1.Pod:
		c.Spec.SchedulingGroup = group
	case *corev1.PodTemplateSpec:
		c.Spec.SchedulingGroup = group
	}
}

// CleanupOnCompletion deletes a RayCluster's PodGroup, then on a later call
// its Workload. Other objects are ignored.
func (s *Scheduler) CleanupOnCompletion(ctx context.Context, obj client.Object) (bool, error) {
	cluster, ok := obj.(*rayv1.RayCluster)
	if !ok {
		return false, nil
	}
	return s.deleteAll(ctx, cluster)
}
