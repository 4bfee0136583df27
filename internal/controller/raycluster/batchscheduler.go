package raycluster

import (
	"context"
	"errors"
	"time"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/batchscheduler"
	"github.com/ray-operator/ray-operator/internal/passsteps"
)

// submitToBatchScheduler lets the batch scheduler plugin prepare for the
// cluster's Pods (Volcano and scheduler-plugins create or resize its
// PodGroup), on every pass as KubeRay does, so that the gang follows
// replica changes. A failure stops the pass before any Pod is created: the
// cluster gets the ReplicaFailure condition (reason FailedBatchScheduling)
// and a Warning event. A plugin that waits (KubernetesWAS replacing its
// PodGroup) ends the pass without Pods and asks for another soon; the
// deletion it waits for also wakes the controller. A suspended cluster does
// not get here.
func (r *Reconciler) submitToBatchScheduler(ctx context.Context, s *scope) (passsteps.Result, error) {
	if r.opts.BatchScheduler == nil {
		return passsteps.Result{}, nil
	}
	err := batchscheduler.Submit(ctx, r.opts.BatchScheduler, s.cluster)
	switch {
	case err == nil:
		return passsteps.Result{}, nil
	case batchscheduler.IsWaiting(err):
		ctrl.LoggerFrom(ctx).Info("Waiting for the batch scheduler", "batchScheduler", r.opts.BatchScheduler.Name(), "reason", err.Error())
		return passsteps.Result{Stop: true, RequeueAfter: batchSchedulerWait}, nil
	}
	r.events.Eventf(s.cluster, nil, corev1.EventTypeWarning, reasonFailedBatchScheduling, actionCreate,
		"Batch scheduler %s refused RayCluster %s/%s: %v", r.opts.BatchScheduler.Name(), s.cluster.Namespace, s.cluster.Name, err)
	return passsteps.Result{}, errors.Join(errFailedBatchScheduling, err)
}

// batchSchedulerWait is when a pass the batch scheduler plugin ended looks
// again, should no watch event come first.
const batchSchedulerWait = 2 * time.Second

// podDecorator hands the plugin's metadata hook to the Pod builders, which
// call it on every head (group "headgroup") and worker Pod they build.
type podDecorator struct {
	scheduler batchscheduler.Scheduler
}

// MutatePod adds the plugin's labels, annotations and schedulerName. The
// builders are pure and have no context; the plugins use theirs only to
// log.
func (d podDecorator) MutatePod(cluster *rayv1.RayCluster, pod *corev1.Pod, groupName string) {
	batchscheduler.AddMetadata(context.Background(), d.scheduler, cluster, pod, groupName)
}
