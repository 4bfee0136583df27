package raycluster

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/childwrite"
	"github.com/ray-operator/ray-operator/internal/expectations"
	"github.com/ray-operator/ray-operator/internal/passsteps"
)

// reconcilePods makes the Pods match the spec: nothing but deletions while
// the cluster suspends; then the batch scheduler's preparation (a PodGroup)
// and nothing but deletions while the cluster is recreated for an upgrade;
// then the head, then each worker group in order, and finally clears the
// workersToDelete lists it carried out.
func (r *Reconciler) reconcilePods(ctx context.Context, s *scope) (passsteps.Result, error) {
	res, err := r.reconcilePodSets(ctx, s)
	if errors.Is(err, errMTLSNotReady) {
		// Waiting for certificates is not a failure: the MTLS step has
		// reported it (MTLSCertsNotReady) and a Certificate event or the
		// requeue brings the next pass.
		return passsteps.Requeue(mtlsWaitRequeue), nil
	}
	return res, err
}

// reconcilePodSets is reconcilePods without the mTLS wait's translation.
func (r *Reconciler) reconcilePodSets(ctx context.Context, s *scope) (passsteps.Result, error) {
	if stop, err := r.reconcileSuspension(ctx, s); stop {
		return passsteps.Result{Stop: true}, err
	}
	if res, err := r.submitToBatchScheduler(ctx, s); res.Stop || err != nil {
		return res, err
	}
	if recreated, err := r.reconcileRecreate(ctx, s); recreated || err != nil {
		return passsteps.Result{Stop: recreated}, err
	}
	if err := r.reconcileHeadPod(ctx, s); err != nil {
		return passsteps.Result{}, err
	}
	for i := range s.cluster.Spec.WorkerGroupSpecs {
		if err := r.reconcileWorkerGroup(ctx, s, i); err != nil {
			return passsteps.Result{}, err
		}
	}
	return passsteps.Result{}, r.clearWorkersToDelete(ctx, s)
}

// podEvents are the event reasons and ReplicaFailure cause of one Pod role.
type podEvents struct {
	role                  string // "head" or "worker"
	created, failedCreate string
	deleted, failedDelete string
	createErr, deleteErr  error
}

var (
	headPodEvents = podEvents{
		role: "head", created: reasonCreatedHeadPod, failedCreate: reasonFailedToCreateHeadPod,
		deleted: reasonDeletedHeadPod, failedDelete: reasonFailedToDeleteHeadPod,
		createErr: errFailedCreateHeadPod, deleteErr: errFailedDeleteHeadPod,
	}
	workerPodEvents = podEvents{
		role: "worker", created: reasonCreatedWorkerPod, failedCreate: reasonFailedToCreateWorkerPod,
		deleted: reasonDeletedWorkerPod, failedDelete: reasonFailedToDeleteWorkerPod,
		createErr: errFailedCreateWorkerPod, deleteErr: errFailedDeleteWorkerPod,
	}
)

// createPod creates pod and expects it in the cache under group.
func (r *Reconciler) createPod(ctx context.Context, s *scope, pod *corev1.Pod, group string, ev podEvents) error {
	return r.createPods(ctx, s, []*corev1.Pod{pod}, group, ev)
}

// createPods creates pods, all of one group and role, in rounds whose
// creates are sent together: the slow start of Kubernetes' ReplicaSet and
// Job controllers, over the whole pass rather than per group. The pass's
// first round is one Pod and the creates held back until then (the head
// Service); a round after one whose creates all succeeded may send twice
// as many as that one did. A create that fails ends the pass after its
// round, so a quota or a webhook that refuses Pods costs one round of
// failed creates, not every replica. A new cluster's head Service and head
// Pod are thus the first round and its first four workers the second: its
// creating pass waits for two round trips instead of three.
func (r *Reconciler) createPods(ctx context.Context, s *scope, pods []*corev1.Pod, group string, ev podEvents) error {
	if len(pods) == 0 {
		return nil
	}
	if err := r.mtlsReady(ctx, s); err != nil {
		return err
	}
	s.podsWritten = true
	for lo := 0; lo < len(pods); {
		held := s.takeHeld()
		batch := pods[lo:min(lo+s.roundPods(len(held)), len(pods))]
		errs := r.sendCreates(ctx, createsOf(held, batch))
		heldErr := r.recordHeldCreates(ctx, s, held, errs[:len(held)])
		if err := errors.Join(heldErr, r.recordPodCreates(ctx, s, batch, group, ev, errs[len(held):])); err != nil {
			return err
		}
		s.roundSucceeded(len(held) + len(batch))
		lo += len(batch)
	}
	return nil
}

// roundPods is how many Pods the pass's next round of creates sends beside
// held other creates: one in the first round, else what is left of the
// round's size after them, at least one.
func (s *scope) roundPods(held int) int {
	if s.createRound == 0 {
		return 1
	}
	return max(1, s.createRound-held)
}

// roundSucceeded doubles the size of the next round after a round of sent
// creates that all succeeded.
func (s *scope) roundSucceeded(sent int) {
	s.createRound = 2 * max(s.createRound, sent)
}

// createsOf lists the objects of a round of creates: the held ones first.
func createsOf(held []heldCreate, pods []*corev1.Pod) []client.Object {
	objs := make([]client.Object, 0, len(held)+len(pods))
	for i := range held {
		objs = append(objs, held[i].obj)
	}
	for _, pod := range pods {
		objs = append(objs, pod)
	}
	return objs
}

// recordPodCreates records the outcome of a batch's creates, in order: an
// expectation and a creation for each Pod created, a warning event for each
// create that failed. It returns the first failure.
func (r *Reconciler) recordPodCreates(ctx context.Context, s *scope, pods []*corev1.Pod, group string, ev podEvents, errs []error) error {
	var first error
	for i, pod := range pods {
		err := r.Children().Report(ctx, s.cluster, childwrite.Create, pod, childwrite.Event{
			FailedReason: ev.failedCreate,
			FailedNote:   fmt.Sprintf("Failed to create %s Pod %s/%s", ev.role, pod.Namespace, pod.Name+pod.GenerateName),
		}, errs[i], childwrite.ErrorAs(ev.createErr), childwrite.DoneBy(func() {
			r.Expectations.Expect(pod.Namespace, s.cluster.Name, group, pod.Name, expectations.Create)
			s.podsCreated = true
			s.events.add(childChange{reason: ev.created, action: actionCreate, noun: ev.role + " Pod", group: group}, pod.Name)
		}))
		if err != nil && first == nil {
			first = err
		}
	}
	return first
}

// deletePod deletes pod, expecting it gone from the cache under group, and
// says why in the event. A Pod already gone is not an error.
func (r *Reconciler) deletePod(ctx context.Context, s *scope, pod *corev1.Pod, group string, ev podEvents, why string) error {
	s.podsWritten = true
	return r.Children().Delete(ctx, s.cluster, pod, childwrite.Event{
		FailedReason: ev.failedDelete,
		FailedNote:   fmt.Sprintf("Failed deleting %s Pod %s/%s", ev.role, pod.Namespace, pod.Name),
	}, childwrite.ErrorAs(ev.deleteErr), childwrite.DoneBy(func() {
		r.Expectations.Expect(pod.Namespace, s.cluster.Name, group, pod.Name, expectations.Delete)
		s.events.add(childChange{reason: ev.deleted, action: actionDelete, noun: ev.role + " Pod", group: group, why: why}, pod.Name)
	}))
}

// deletePods deletes several Pods of one group for the same reason.
func (r *Reconciler) deletePods(ctx context.Context, s *scope, pods []corev1.Pod, group, why string) error {
	for i := range pods {
		if err := r.deletePod(ctx, s, &pods[i], group, workerPodEvents, why); err != nil {
			return err
		}
	}
	return nil
}

// groupSatisfied reports whether the cache shows this controller's last
// creations and deletions in a group; a group that is behind is left alone
// in this pass (the Pod events that catch it up trigger the next one). The
// answer is the one clusterPods got just before listing the Pods.
func (r *Reconciler) groupSatisfied(ctx context.Context, s *scope, group string) (bool, error) {
	snap, err := r.clusterPods(ctx, s)
	if err != nil {
		return false, err
	}
	check := snap.expectations[group]
	if check.Err != nil {
		return false, fmt.Errorf("checking scale expectations: %w", check.Err)
	}
	ok := check.Met
	if !ok {
		ctrl.LoggerFrom(ctx).Info("Waiting for the cache to show earlier Pod changes", "group", groupLabel(group))
	}
	return ok, nil
}

func groupLabel(group string) string {
	if group == expectations.HeadGroup {
		return rayv1.HeadGroupName
	}
	return group
}
