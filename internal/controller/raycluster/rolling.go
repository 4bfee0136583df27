package raycluster

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/raypod"
	"github.com/ray-operator/ray-operator/internal/rollingupdate"
)

// Events of upgradeStrategy RollingUpdate (not KubeRay's).
const (
	reasonRollingUpdateBatch   = "RollingUpdateBatch"
	reasonRollingUpdateBlocked = "RollingUpdateBlocked"
	rollingDeleteWhy           = "out of date (upgradeStrategy RollingUpdate)"
)

// With upgradeStrategy.type RollingUpdate, every worker Pod carries the
// hash of its group's spec; while a group has out-of-date Pods, each pass
// takes one step of rollingupdate.Step instead of the ordinary scaling.
// The head Pod is left alone, as with None.

// stampWorkerPod records on a new worker Pod the hash of its group's spec,
// under RollingUpdate only: other clusters' Pods stay KubeRay's.
func stampWorkerPod(cluster *rayv1.RayCluster, index int, pod *corev1.Pod) error {
	if !rollingupdate.Enabled(&cluster.Spec) {
		return nil
	}
	hash, err := rollingupdate.GroupHash(&cluster.Spec.WorkerGroupSpecs[index])
	if err != nil {
		return err
	}
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	pod.Annotations[rollingupdate.AnnotationTemplateHash] = hash
	return nil
}

// reconcileRollingUpdate takes one step of a group's update and reports
// whether the update decided the group's Pods in this pass. pods are the
// group's Pods without those workersToDelete named (deleted already).
func (r *Reconciler) reconcileRollingUpdate(ctx context.Context, s *scope, index int, pods []corev1.Pod) (bool, error) {
	if !rollingupdate.Enabled(&s.cluster.Spec) {
		return false, nil
	}
	group := &s.cluster.Spec.WorkerGroupSpecs[index]
	hash, err := rollingupdate.GroupHash(group)
	if err != nil {
		return false, err
	}
	plan, err := rollingupdate.Step(rollingupdate.Input{
		Group: group, Options: s.cluster.Spec.UpgradeStrategy.RollingUpdate, Hash: hash, Pods: pods,
		ClusterSuspended: s.cluster.Spec.Suspend != nil && *s.cluster.Spec.Suspend,
		Autoscaling:      raypod.AutoscalingEnabled(s.cluster),
	})
	if err != nil || !plan.InProgress {
		return false, err
	}
	ctrl.LoggerFrom(ctx).V(1).Info("Rolling update step", "upToDate", plan.UpToDate, "outOfDate", plan.OutOfDate,
		"desired", plan.Desired, "delete", plan.Delete, "create", plan.Create, "blocked", plan.Blocked)
	if plan.Blocked {
		r.events.Eventf(s.cluster, nil, corev1.EventTypeWarning, reasonRollingUpdateBlocked, actionUpdate,
			"Worker group %s: %d out-of-date Pods cannot be replaced: rollingUpdate allows no extra Pod (maxSurge, or maxReplicas with the autoscaler), and minReplicas (%s) or maxUnavailable allows no unready one",
			group.GroupName, plan.OutOfDate, ptrValue(group.MinReplicas))
		return true, nil
	}
	return true, r.carryOutStep(ctx, s, index, pods, plan)
}

// carryOutStep deletes and creates what plan says, within the pass's scale
// budget, and reports the batch.
func (r *Reconciler) carryOutStep(ctx context.Context, s *scope, index int, pods []corev1.Pod, plan rollingupdate.Plan) error {
	group := s.cluster.Spec.WorkerGroupSpecs[index].GroupName
	var victims []corev1.Pod
	for _, name := range plan.Delete[:s.takeScaleBudget(len(plan.Delete))] {
		if i := slices.IndexFunc(pods, func(p corev1.Pod) bool { return p.Name == name }); i >= 0 {
			victims = append(victims, pods[i])
		}
	}
	create := s.takeScaleBudget(plan.Create)
	if len(victims) == 0 && create == 0 {
		return nil
	}
	r.events.Eventf(s.cluster, nil, corev1.EventTypeNormal, reasonRollingUpdateBatch, actionUpdate,
		"Worker group %s: deleting %d out-of-date Pods [%s] and creating %d; %d of %d desired Pods up to date",
		group, len(victims), podNames(victims), create, plan.UpToDate, plan.Desired)
	if r.Metrics != nil {
		r.Metrics.ObserveRollingUpdateBatch(s.cluster.Namespace, len(victims))
	}
	if err := r.deletePods(ctx, s, victims, group, rollingDeleteWhy); err != nil {
		return err
	}
	return r.createWorkers(ctx, s, index, freeReplicaIndices(pods, create))
}

func podNames(pods []corev1.Pod) string {
	names := make([]string, len(pods))
	for i := range pods {
		names[i] = pods[i].Name
	}
	return strings.Join(names, ", ")
}

func ptrValue(p *int32) string {
	if p == nil {
		return "unset"
	}
	return fmt.Sprint(*p)
}
