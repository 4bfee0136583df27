package raycluster

import (
	"context"
	"fmt"
	"math"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/clustersize"
	"github.com/ray-operator/ray-operator/internal/conditions"
	"github.com/ray-operator/ray-operator/internal/features"
	"github.com/ray-operator/ray-operator/internal/passsteps"
	"github.com/ray-operator/ray-operator/internal/podstatus"
	"github.com/ray-operator/ray-operator/internal/statuswrite"
)

// finishPass computes the status, writes it if it changed and decides when
// to look again: soon after a status change (multi-pass operations such as
// suspension advance on it), otherwise after the default interval, the
// safety net for lost watch events. Errors are returned in order of how
// fundamental they are: reconcile, then status calculation, then the
// status write; controller-runtime then retries with backoff. A step that
// asked to be looked at sooner (steps) is: the mTLS wait and the renewal of
// operator-issued certificates, the batch scheduler's wait.
func (r *Reconciler) finishPass(ctx context.Context, s *scope, steps passsteps.Result, reconcileErr error) (ctrl.Result, error) {
	res, err := r.finishStatus(ctx, s, reconcileErr)
	if err != nil {
		return res, err
	}
	res.RequeueAfter = passsteps.Sooner(res.RequeueAfter, steps.RequeueAfter)
	return res, nil
}

// finishStatus writes the status unless deferStatus, and asks for a short
// requeue after a change, the operator's requeue interval otherwise.
func (r *Reconciler) finishStatus(ctx context.Context, s *scope, reconcileErr error) (ctrl.Result, error) {
	if s.deleted && reconcileErr == nil {
		return ctrl.Result{}, nil
	}
	if s.noStatus {
		return ctrl.Result{}, reconcileErr
	}
	if deferStatus(s, reconcileErr) {
		return ctrl.Result{RequeueAfter: shortRequeue}, nil
	}
	status, calcErr := r.calculateStatus(ctx, s, reconcileErr)
	changed, writeErr := false, error(nil)
	if calcErr == nil {
		changed, writeErr = r.writeStatus(ctx, s, status)
	}
	for _, err := range []error{reconcileErr, calcErr, writeErr} {
		if err != nil {
			return ctrl.Result{}, err
		}
	}
	if changed || s.scaleDeferred {
		return ctrl.Result{RequeueAfter: shortRequeue}, nil
	}
	return ctrl.Result{RequeueAfter: r.opts.RequeueAfter}, nil
}

// deferStatus says the pass leaves the status to the next one: it created
// Pods without error and finished its scaling, so the cache cannot show
// them yet and a status computed now would describe Pods that are already
// outdated. The Pods' own events (or the short requeue) bring the next pass,
// which writes the status from Pods the cache shows; when the Pods are
// already up by then (a busy operator, a fast scheduler), the cluster gets
// one status write, ready, instead of two. A pass that failed, that left
// Pods for later (the per-pass write budget) or that has a fixed spec's
// ValidationFailed condition to clear writes its status as usual. The same
// holds for a pass whose cache does not show a child the controller
// created: the head Service (its create found it there), or Pods an
// earlier pass created (their group's expectations wait for them); the
// child's event brings the next pass. A cache behind on Pods this
// controller deleted does not defer the status: suspension and scale-down
// report their progress as the Pods go.
func deferStatus(s *scope, reconcileErr error) bool {
	return reconcileErr == nil && (s.podsCreated || s.cacheBehind) && !s.scaleDeferred &&
		conditions.Get(s.original.Status.Conditions, rayv1.RayClusterValidationFailed) == nil
}

// observation is what the status is computed from.
type observation struct {
	pods        []corev1.Pod // head and worker Pods
	head        *corev1.Pod  // nil when there is none
	headService *corev1.Service
}

// rayPods is the head and worker Pods of pods, in order: pods itself when
// it has no other (the usual case, which then copies no Pod), to be read
// only.
func rayPods(pods []corev1.Pod) []corev1.Pod {
	isRay := func(p *corev1.Pod) bool {
		t := rayv1.RayNodeType(p.Labels[rayv1.LabelNodeType])
		return t == rayv1.HeadNode || t == rayv1.WorkerNode
	}
	for i := range pods {
		if isRay(&pods[i]) {
			continue
		}
		out := slices.Clone(pods[:i])
		for j := i + 1; j < len(pods); j++ {
			if isRay(&pods[j]) {
				out = append(out, pods[j])
			}
		}
		return out
	}
	return pods
}

// observe finds the cluster's Pods (podsForStatus) and lists its head
// Service; one the pass created that the cache does not show yet is taken
// as the create's answer gave it.
func (r *Reconciler) observe(ctx context.Context, s *scope) (*observation, error) {
	cluster := s.cluster
	all, err := r.podsForStatus(ctx, s)
	if err != nil {
		return nil, err
	}
	o := &observation{pods: rayPods(all)}
	for i := range o.pods {
		if o.pods[i].Labels[rayv1.LabelNodeType] != string(rayv1.HeadNode) {
			continue
		}
		if o.head != nil {
			return nil, fmt.Errorf("found multiple head Pods: %s and %s", o.head.Name, o.pods[i].Name)
		}
		o.head = &o.pods[i]
	}
	services, err := r.headServices(ctx, cluster)
	if err != nil {
		return nil, err
	}
	switch len(services) {
	case 0:
		o.headService = s.createdHeadService
	case 1:
		o.headService = &services[0]
	default:
		return nil, fmt.Errorf("found multiple head services %v", serviceNames(services))
	}
	return o, nil
}

// calculateStatus derives the new status from the old one and what is
// observed; the object itself is not modified.
func (r *Reconciler) calculateStatus(ctx context.Context, s *scope, reconcileErr error) (*rayv1.RayClusterStatus, error) {
	o, err := r.observe(ctx, s)
	if err != nil {
		return nil, err
	}
	cluster := s.cluster
	status := cluster.Status.DeepCopy()
	now := metav1.NewTime(r.Clock.Now())
	status.ObservedGeneration = cluster.Generation
	setReplicaCounts(status, cluster, o.pods)
	setDesiredResources(status, cluster)
	setState(status, cluster, o.pods, reconcileErr, now)
	setHeadInfo(status, o)
	conditions.Remove(&status.Conditions, rayv1.RayClusterValidationFailed)
	if r.opts.Features.Enabled(features.RayClusterStatusConditions) {
		setReplicaFailure(status, reconcileErr, now)
		setHeadPodReady(status, o.head, now)
		setProvisioned(status, o.pods, now)
		setSuspendConditions(status, cluster, len(o.pods), now)
	}
	setIdleCondition(status, cluster, s.idleCondition)
	return status, nil
}

// writeStatus writes status when it differs from the status read at the
// start of the pass, compared as a whole; only lastUpdateTime is set here,
// because it records the write itself. It reports whether it wrote.
func (r *Reconciler) writeStatus(ctx context.Context, s *scope, status *rayv1.RayClusterStatus) (bool, error) {
	if equality.Semantic.DeepEqual(&s.original.Status, status) {
		return false, nil
	}
	now := metav1.NewTime(r.Clock.Now())
	status.LastUpdateTime = &now
	if err := statuswrite.Write(ctx, r.Client, statusOnly(s.original), &s.original.Status, status); err != nil {
		return true, fmt.Errorf("writing status: %w", err)
	}
	r.observeProvisioned(s.original, status)
	return true, nil
}

// statusOnly is a cluster's name, without its spec, for the status write
// to name and to decode the API server's answer into: decoding the spec
// costs about 30 MB of transient memory per status write of the largest
// RayCluster the API server stores (BenchmarkLargestRayCluster). It
// carries no resourceVersion, so the write does not fail when the cluster
// changed since the pass read it (the autoscaler patches replicas often):
// the pass wrote its status that way since the status became a patch.
func statusOnly(c *rayv1.RayCluster) *rayv1.RayCluster {
	return &rayv1.RayCluster{TypeMeta: c.TypeMeta, ObjectMeta: metav1.ObjectMeta{Name: c.Name, Namespace: c.Namespace}}
}

// observeProvisioned records the provisioning time when RayClusterProvisioned
// has just turned true.
func (r *Reconciler) observeProvisioned(cluster *rayv1.RayCluster, status *rayv1.RayClusterStatus) {
	provisioned := string(rayv1.RayClusterProvisioned)
	if r.Metrics == nil || conditions.IsTrue(cluster.Status.Conditions, provisioned) ||
		!conditions.IsTrue(status.Conditions, provisioned) {
		return
	}
	r.Metrics.ObserveProvisioned(cluster.Name, cluster.Namespace, r.Clock.Since(cluster.CreationTimestamp.Time))
}

// setReplicaCounts counts worker Pods ("replicas" for compatibility, but
// Pods: a multi-host replica counts numOfHosts times).
func setReplicaCounts(status *rayv1.RayClusterStatus, cluster *rayv1.RayCluster, pods []corev1.Pod) {
	status.ReadyWorkerReplicas, status.AvailableWorkerReplicas = 0, 0
	for i := range pods {
		if pods[i].Labels[rayv1.LabelNodeType] != string(rayv1.WorkerNode) {
			continue
		}
		if pods[i].Status.Phase == corev1.PodRunning {
			status.AvailableWorkerReplicas++
		}
		if podstatus.RunningAndReady(&pods[i]) {
			status.ReadyWorkerReplicas++
		}
	}
	var desired, lo, hi int64
	for i := range cluster.Spec.WorkerGroupSpecs {
		g := &cluster.Spec.WorkerGroupSpecs[i]
		desired += int64(clustersize.TimesHosts(clustersize.DesiredReplicas(g), g))
		lo += int64(clustersize.TimesHosts(clustersize.MinReplicas(g), g))
		hi += int64(clustersize.TimesHosts(clustersize.MaxReplicas(g), g))
	}
	status.DesiredWorkerReplicas, status.MinWorkerReplicas, status.MaxWorkerReplicas = clampInt32(desired), clampInt32(lo), clampInt32(hi)
}

func clampInt32(v int64) int32 {
	return int32(min(v, math.MaxInt32))
}

// setState sets the deprecated coarse state: ready once every desired Pod
// runs after a clean pass, suspended once a suspended cluster has no Pod.
// Like KubeRay's, it is otherwise left as it was.
func setState(status *rayv1.RayClusterStatus, cluster *rayv1.RayCluster, pods []corev1.Pod, reconcileErr error, now metav1.Time) {
	old := status.State
	if reconcileErr == nil && len(pods) == int(status.DesiredWorkerReplicas)+1 && allPodsRunning(pods) {
		status.State = rayv1.Ready
		status.Reason = ""
	}
	if specSuspended(cluster) && len(pods) == 0 {
		status.State = rayv1.Suspended
	}
	if status.State != old {
		if status.StateTransitionTimes == nil {
			status.StateTransitionTimes = map[rayv1.ClusterState]*metav1.Time{}
		}
		status.StateTransitionTimes[status.State] = &now
	}
}

// setHeadInfo locates the head Pod and Service. A headless head Service has
// no IP of its own; the head Pod's IP stands for it.
func setHeadInfo(status *rayv1.RayClusterStatus, o *observation) {
	status.Head = rayv1.HeadInfo{}
	if o.head != nil {
		status.Head.PodIP, status.Head.PodName = o.head.Status.PodIP, o.head.Name
	}
	status.Endpoints = nil
	svc := o.headService
	if svc == nil {
		return
	}
	status.Head.ServiceName = svc.Name
	status.Head.ServiceIP = svc.Spec.ClusterIP
	if svc.Spec.ClusterIP == corev1.ClusterIPNone {
		status.Head.ServiceIP = status.Head.PodIP
	}
	status.Endpoints = endpoints(svc)
}

// endpoints maps the head Service's named ports to the node port, or else
// the target port.
func endpoints(svc *corev1.Service) map[string]string {
	out := map[string]string{}
	for _, p := range svc.Spec.Ports {
		switch {
		case p.Name == "":
		case p.NodePort != 0:
			out[p.Name] = fmt.Sprint(p.NodePort)
		case p.TargetPort.IntVal != 0:
			out[p.Name] = fmt.Sprint(p.TargetPort.IntVal)
		case p.TargetPort.StrVal != "":
			out[p.Name] = p.TargetPort.StrVal
		default: // the API server defaults targetPort to port
			out[p.Name] = fmt.Sprint(p.Port)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
