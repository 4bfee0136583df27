// Package kaischeduler is the batch scheduler plugin for NVIDIA's
// KAI-Scheduler (--batch-scheduler=kai-scheduler). KAI-Scheduler's own
// PodGrouper makes the PodGroups from the Pods' owners, so the plugin only
// gives the Pods schedulerName kai-scheduler and the owner's
// kai.scheduler/queue label. It rejects K8sJobMode RayJobs: their submitter
// Pod appears only once the cluster is ready, too late for the gang.
package kaischeduler

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/batchscheduler"
)

// Name is the plugin's name in --batch-scheduler and its Pods' schedulerName.
const Name = "kai-scheduler"

// LabelQueue is the KAI queue; without it KAI-Scheduler leaves Pods pending.
const LabelQueue = "kai.scheduler/queue"

// Scheduler checks RayJobs and decorates Pods; it keeps no state.
type Scheduler struct{}

var (
	_ batchscheduler.Submitter     = Scheduler{}
	_ batchscheduler.MetadataAdder = Scheduler{}
)

// Name is the Pods' schedulerName.
func (Scheduler) Name() string { return Name }

// DoBatchSchedulingOnSubmission rejects K8sJobMode RayJobs; there is
// nothing to create.
func (Scheduler) DoBatchSchedulingOnSubmission(_ context.Context, obj client.Object) error {
	if job, ok := obj.(*rayv1.RayJob); ok && job.Spec.EffectiveSubmissionMode() == rayv1.K8sJobMode {
		return batchscheduler.Rejected(Name, "KAI-Scheduler does not support RayJob with K8sJobMode: the submitter pod is created after RayCluster is ready, preventing proper gang scheduling")
	}
	return nil
}

// AddMetadataToChildResource sets the schedulerName and copies the queue.
func (Scheduler) AddMetadataToChildResource(ctx context.Context, parent, child metav1.Object, _ string) {
	batchscheduler.SetSchedulerName(child, Name)
	if parent.GetLabels()[LabelQueue] == "" {
		ctrl.LoggerFrom(ctx).WithName(Name).Info("Queue label missing from parent; child will remain pending", "requiredLabel", LabelQueue)
		return
	}
	batchscheduler.CopyLabel(parent, child, LabelQueue, LabelQueue)
}

// Factory makes the KAI-Scheduler plugin.
type Factory struct{}

var _ batchscheduler.Factory = Factory{}

// New returns the plugin.
func (Factory) New(context.Context, *rest.Config, client.Client) (batchscheduler.Scheduler, error) {
	return Scheduler{}, nil
}
