package kuberneteswas

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/batchscheduler"
	scheduling "github.com/ray-operator/ray-operator/internal/batchscheduler/kuberneteswas/schedulingv1alpha2"
)

// syncWorkload creates the Workload, or replaces a stale one: its PodGroup
// goes first (it references the Workload), then the Workload; each deletion
// ends the pass with a *batchscheduler.WaitingError and a later pass goes
// on. A same-named Workload of another owner is refused.
func (s *Scheduler) syncWorkload(ctx context.Context, cluster *rayv1.RayCluster, desired *scheduling.Workload) error {
	existing := &scheduling.Workload{}
	if found, err := s.get(ctx, client.ObjectKeyFromObject(desired), existing); err != nil || !found {
		return s.create(ctx, desired, err)
	}
	if !metav1.IsControlledBy(existing, cluster) {
		return collision("Workload", existing)
	}
	if existing.DeletionTimestamp != nil {
		return batchscheduler.Waiting(Name, "Workload %s is being deleted, will retry", klog.KObj(existing))
	}
	if !workloadStale(existing, desired) {
		return nil
	}
	podGroup := &scheduling.PodGroup{}
	found, err := s.get(ctx, client.ObjectKey{Namespace: cluster.Namespace, Name: PodGroupName(cluster.Name)}, podGroup)
	if err != nil {
		return err
	}
	if found && metav1.IsControlledBy(podGroup, cluster) {
		if _, err := s.deletePodGroup(ctx, podGroup); err != nil {
			return err
		}
		return batchscheduler.Waiting(Name, "deleted PodGroup %s before replacing stale Workload, will retry after deletion completes", klog.KObj(podGroup))
	}
	if err := client.IgnoreNotFound(s.deleteWithUID(ctx, existing)); err != nil {
		return fmt.Errorf("deleting stale Workload %s: %w", klog.KObj(existing), err)
	}
	return batchscheduler.Waiting(Name, "deleted stale Workload %s, will retry after deletion completes", klog.KObj(existing))
}

// syncPodGroup creates the PodGroup, or deletes a stale one (another gang
// size) to be made again on a later pass. A same-named PodGroup of another
// owner is refused.
func (s *Scheduler) syncPodGroup(ctx context.Context, cluster *rayv1.RayCluster, desired *scheduling.PodGroup) error {
	existing := &scheduling.PodGroup{}
	if found, err := s.get(ctx, client.ObjectKeyFromObject(desired), existing); err != nil || !found {
		return s.create(ctx, desired, err)
	}
	if !metav1.IsControlledBy(existing, cluster) {
		return collision("PodGroup", existing)
	}
	deleting := existing.DeletionTimestamp != nil
	if !deleting && sameGang(existing.Spec.SchedulingPolicy, desired.Spec.SchedulingPolicy) {
		return nil
	}
	if _, err := s.deletePodGroup(ctx, existing); err != nil {
		return err
	}
	if deleting {
		return batchscheduler.Waiting(Name, "PodGroup %s is being deleted, will retry", klog.KObj(existing))
	}
	return batchscheduler.Waiting(Name, "deleted stale PodGroup %s, will retry after deletion completes", klog.KObj(existing))
}

// deleteAll deletes the cluster's own PodGroup, and once it is gone its own
// Workload; same-named objects of other owners are left alone. It reports
// whether it deleted (or released) anything; a PodGroup it deleted comes
// with a *batchscheduler.WaitingError.
func (s *Scheduler) deleteAll(ctx context.Context, cluster *rayv1.RayCluster) (bool, error) {
	podGroup := &scheduling.PodGroup{}
	key := client.ObjectKey{Namespace: cluster.Namespace, Name: PodGroupName(cluster.Name)}
	found, err := s.get(ctx, key, podGroup)
	if err != nil {
		return false, err
	}
	if found && metav1.IsControlledBy(podGroup, cluster) {
		deleted, err := s.deletePodGroup(ctx, podGroup)
		if err != nil {
			return deleted, err
		}
		return deleted, batchscheduler.Waiting(Name, "waiting for PodGroup %s to finish deleting", key)
	}
	workload := &scheduling.Workload{}
	found, err = s.get(ctx, client.ObjectKeyFromObject(cluster), workload)
	if err != nil || !found || !metav1.IsControlledBy(workload, cluster) {
		return false, err
	}
	if workload.DeletionTimestamp != nil {
		return false, batchscheduler.Waiting(Name, "Workload %s is being deleted, will retry", klog.KObj(workload))
	}
	if err := s.deleteWithUID(ctx, workload); err != nil {
		return false, client.IgnoreNotFound(err)
	}
	ctrl.LoggerFrom(ctx).WithName(Name).Info("Deleted Workload", "workload", klog.KObj(workload))
	return true, nil
}

// deletePodGroup removes the API server's protection finalizer (which would
// hold the PodGroup while Pods still name it; replacing or cleaning up may
// come first) and deletes the PodGroup unless it is already being deleted.
// Other finalizers stay. released says whether it changed anything.
func (s *Scheduler) deletePodGroup(ctx context.Context, pg *scheduling.PodGroup) (released bool, err error) {
	if controllerutil.ContainsFinalizer(pg, scheduling.PodGroupProtectionFinalizer) {
		patch := client.MergeFromWithOptions(pg.DeepCopy(), client.MergeFromWithOptimisticLock{})
		controllerutil.RemoveFinalizer(pg, scheduling.PodGroupProtectionFinalizer)
		if err := s.c.Patch(ctx, pg, patch); err != nil {
			if apierrors.IsNotFound(err) {
				return true, nil
			}
			return false, fmt.Errorf("removing the finalizer of PodGroup %s: %w", klog.KObj(pg), err)
		}
		released = true
	}
	if pg.DeletionTimestamp != nil {
		return released, nil
	}
	if err := s.deleteWithUID(ctx, pg); err != nil {
		if apierrors.IsNotFound(err) {
			return released, nil
		}
		return released, fmt.Errorf("deleting PodGroup %s: %w", klog.KObj(pg), err)
	}
	ctrl.LoggerFrom(ctx).WithName(Name).Info("Deleted PodGroup", "podGroup", klog.KObj(pg))
	return true, nil
}

// get reads key into obj and reports whether it exists.
func (s *Scheduler) get(ctx context.Context, key client.ObjectKey, obj client.Object) (bool, error) {
	if err := s.c.Get(ctx, key, obj); err != nil {
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return false, fmt.Errorf("getting %T %s: %w", obj, key, err)
	}
	return true, nil
}

// create creates obj unless getErr (the failed read before) says otherwise.
func (s *Scheduler) create(ctx context.Context, obj client.Object, getErr error) error {
	if getErr != nil {
		return getErr
	}
	kind := kindOf(obj)
	if err := s.c.Create(ctx, obj); err != nil {
		return fmt.Errorf("creating %s %s: %w", kind, klog.KObj(obj), err)
	}
	ctrl.LoggerFrom(ctx).WithName(Name).Info("Created "+kind, "object", klog.KObj(obj))
	return nil
}

// deleteWithUID deletes obj only if it is still the object read, not a
// namesake made since.
func (s *Scheduler) deleteWithUID(ctx context.Context, obj client.Object) error {
	uid := obj.GetUID()
	return s.c.Delete(ctx, obj, client.Preconditions{UID: &uid})
}

// collision refuses a same-named object the cluster does not control:
// KubeRay's message.
func collision(kind string, obj client.Object) error {
	return batchscheduler.Rejected(Name, "%s %s/%s already exists and is not owned by this RayCluster; rename it or use a different RayCluster name to avoid the collision",
		kind, obj.GetNamespace(), obj.GetName())
}

func kindOf(obj client.Object) string {
	if _, ok := obj.(*scheduling.Workload); ok {
		return "Workload"
	}
	return "PodGroup"
}
