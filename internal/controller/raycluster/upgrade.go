package raycluster

import (
	"context"
	//nolint:gosec // a change detector, not a security measure; KubeRay's hash
	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/buildinfo"
	"github.com/ray-operator/ray-operator/internal/childwrite"
	"github.com/ray-operator/ray-operator/internal/clusterowner"
)

// Annotations of every head Pod, as KubeRay sets them; upgradeStrategy
// Recreate compares them.
const (
	// annotationRecreateHash is the hash of the spec the Pods were made from.
	annotationRecreateHash = "ray.io/upgrade-strategy-recreate-hash"
	// annotationKubeRayVersion is the operator version that made the Pod.
	annotationKubeRayVersion = rayv1.LabelKubeRayVersion
)

// With upgradeStrategy.type Recreate, a change of the Pod templates (or of
// anything else in the spec except replica counts and workersToDelete)
// deletes every Pod at once, and the next passes create them anew. The head
// Pod carries the hash of the spec it was made from. An operator upgrade
// alone must not restart every cluster: when the head was made by another
// operator version, the hash is refreshed instead.

func recreateOnUpgrade(cluster *rayv1.RayCluster) bool {
	s := cluster.Spec.UpgradeStrategy
	return s != nil && s.Type != nil && *s.Type == rayv1.RayClusterRecreate
}

// specHash is the hash every owner of clusters uses (clusterowner.SpecHash):
// a change of replica counts, workersToDelete, suspend, tolerations,
// scheduling gates or the upgrade strategy itself recreates nothing.
func specHash(spec *rayv1.RayClusterSpec) (string, error) {
	return clusterowner.SpecHash(spec)
}

func (r *Reconciler) operatorVersion() string {
	if v := r.opts.Pod.OperatorVersion; v != "" {
		return v
	}
	return buildinfo.Version()
}

// stampHeadPod records on every new head Pod the spec it is made from and
// the operator version that made it, whatever the upgrade strategy.
func (r *Reconciler) stampHeadPod(cluster *rayv1.RayCluster, pod *corev1.Pod) error {
	hash, err := specHash(&cluster.Spec)
	if err != nil {
		return err
	}
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	pod.Annotations[annotationRecreateHash] = hash
	pod.Annotations[annotationKubeRayVersion] = r.operatorVersion()
	return nil
}

// reconcileRecreate deletes every Pod when the spec changed under the
// Recreate strategy, and reports whether it did.
func (r *Reconciler) reconcileRecreate(ctx context.Context, s *scope) (bool, error) {
	if !recreateOnUpgrade(s.cluster) {
		return false, nil
	}
	snap, err := r.clusterPods(ctx, s)
	if err != nil {
		return false, err
	}
	heads := snap.matching(headPodLabels)
	if len(heads) == 0 {
		return false, nil
	}
	before := &heads[0]
	hash, err := specHash(&s.cluster.Spec)
	if err != nil {
		return false, err
	}
	if v := before.Annotations[annotationKubeRayVersion]; v != "" && v != r.operatorVersion() {
		// A merge patch of the two annotations: the cached Pod is trimmed
		// (operator.CacheOptions), so it cannot be sent back whole.
		head := before.DeepCopy()
		head.Annotations[annotationRecreateHash] = hash
		head.Annotations[annotationKubeRayVersion] = r.operatorVersion()
		s.podsWritten = true
		return false, r.Children().Patch(ctx, s.cluster, head, client.MergeFrom(before), childwrite.Event{})
	}
	if old := before.Annotations[annotationRecreateHash]; old == "" || old == hash {
		return false, nil
	}
	ctrl.LoggerFrom(ctx).Info("The spec changed and upgradeStrategy is Recreate: deleting every Pod")
	if err := r.deleteAllPodsFor(ctx, s, "a spec change with upgradeStrategy Recreate"); err != nil {
		return true, err
	}
	r.Expectations.Forget(s.cluster.Namespace, s.cluster.Name)
	return true, nil
}
