package node

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/util/retry"

	"github.com/ray-operator/ray-operator/local/internal/podworker"
)

// virtual-kubelet writes a pod's status blindly (resourceVersion "0") from
// the provider's last copy, and hands the provider only changes of a pod's
// spec and metadata. A kubelet instead keeps the conditions others set
// (those of readiness gates, through the status API) and re-evaluates Ready
// when they change. statusWriter and conditionsChanged give the node both.

// statusWriter is the pod client of virtual-kubelet's pod controller: its
// status writes keep the conditions others own.
type statusWriter struct{ corev1client.PodsGetter }

// Pods implements corev1client.PodsGetter.
func (s statusWriter) Pods(namespace string) corev1client.PodInterface {
	return mergingPods{s.PodsGetter.Pods(namespace)}
}

// mergingPods is a PodInterface whose UpdateStatus merges conditions.
type mergingPods struct{ corev1client.PodInterface }

// UpdateStatus writes pod's status as a kubelet's status manager does: it
// reads the pod, keeps the conditions the node does not own as the API has
// them, and writes against the version it read, again on a conflict.
func (p mergingPods) UpdateStatus(ctx context.Context, pod *corev1.Pod, opts metav1.UpdateOptions) (*corev1.Pod, error) {
	var out *corev1.Pod
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := p.Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if pod.UID != "" && cur.UID != pod.UID { // a new pod of the same name
			return apierrors.NewNotFound(corev1.Resource("pods"), pod.Name)
		}
		next := pod.DeepCopy()
		next.ResourceVersion = cur.ResourceVersion
		next.Status.Conditions = mergeConditions(cur.Status.Conditions, pod.Status.Conditions)
		out, err = p.PodInterface.UpdateStatus(ctx, next, opts)
		return err
	})
	return out, err
}

// mergeConditions is the node's conditions from written, then the others'
// from current.
func mergeConditions(current, written []corev1.PodCondition) []corev1.PodCondition {
	out := make([]corev1.PodCondition, 0, len(current)+len(written))
	for _, c := range written {
		if podworker.OwnsCondition(c.Type) {
			out = append(out, c)
		}
	}
	return append(out, othersConditions(current)...)
}

// othersConditions are the conditions of cs the node does not own.
func othersConditions(cs []corev1.PodCondition) []corev1.PodCondition {
	var out []corev1.PodCondition
	for _, c := range cs {
		if !podworker.OwnsCondition(c.Type) {
			out = append(out, c)
		}
	}
	return out
}

// conditionsChanged is the pod informer's update handler: a pod whose
// conditions owned by others changed goes to its worker, which re-evaluates
// Ready against the pod's readiness gates.
func (p *provider) conditionsChanged(oldObj, newObj any) {
	oldPod, ok := oldObj.(*corev1.Pod)
	newPod, ok2 := newObj.(*corev1.Pod)
	if !ok || !ok2 || equality.Semantic.DeepEqual(othersConditions(oldPod.Status.Conditions), othersConditions(newPod.Status.Conditions)) {
		return
	}
	p.mu.Lock()
	w := p.workers[newPod.UID]
	p.mu.Unlock()
	if w != nil {
		w.Update(newPod)
	}
}
