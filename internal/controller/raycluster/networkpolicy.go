package raycluster

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/childwrite"
	"github.com/ray-operator/ray-operator/internal/features"
	"github.com/ray-operator/ray-operator/internal/passsteps"
	"github.com/ray-operator/ray-operator/internal/raynetpol"
)

// KubeRay's NetworkPolicy role: it reads, creates, updates and deletes
// them, and never patches.
//
// +kubebuilder:rbac:groups=networking.k8s.io,resources=networkpolicies,verbs=get;list;watch;create;update;delete

// networkPolicyKind is how events name the kind, as KubeRay's do.
const networkPolicyKind = "NetworkPolicy"

// reconcileNetworkPolicies makes the cluster's NetworkPolicies match
// spec.networkPolicy (feature gate RayClusterNetworkPolicy): it creates or
// updates the head's and each worker group's, and deletes the ones this
// cluster controls that are no longer wanted (a removed group, or all of
// them when the field is removed). It runs before the Pods so that they
// start isolated. KubeRay runs this in a controller of its own, so there a
// failure here does not hold back the Pods; here it stops the pass.
func (r *Reconciler) reconcileNetworkPolicies(ctx context.Context, s *scope) (passsteps.Result, error) {
	if !r.opts.Features.Enabled(features.RayClusterNetworkPolicy) {
		return passsteps.Result{}, nil
	}
	keep := map[string]bool{}
	for _, p := range raynetpol.Build(s.cluster) {
		keep[p.Name] = true
		if err := r.applyNetworkPolicy(ctx, s, p); err != nil {
			return passsteps.Result{}, err
		}
	}
	return passsteps.Result{}, r.deleteStaleNetworkPolicies(ctx, s, keep)
}

// applyNetworkPolicy creates desired, or updates the cluster's policy of
// that name when its labels or spec differ. The cache holds only the
// operator's policies, so one missing there is looked up on the API server
// before creating: a user's policy of that name is a collision, reported
// and not touched.
func (r *Reconciler) applyNetworkPolicy(ctx context.Context, s *scope, desired *networkingv1.NetworkPolicy) error {
	existing := &networkingv1.NetworkPolicy{}
	err := r.Client.Get(ctx, client.ObjectKeyFromObject(desired), existing)
	if apierrors.IsNotFound(err) {
		err = r.LiveReader.Get(ctx, client.ObjectKeyFromObject(desired), existing)
	}
	if apierrors.IsNotFound(err) {
		return r.createChild(ctx, s, desired, childEvents{networkPolicyKind, reasonCreatedNetworkPolicy, reasonFailedToCreateNetworkPolicy})
	}
	if err != nil {
		return err
	}
	if !metav1.IsControlledBy(existing, s.cluster) {
		r.events.Eventf(s.cluster, nil, corev1.EventTypeWarning, reasonNetworkPolicyNameCollision, actionValidate,
			"NetworkPolicy %s/%s already exists and is not owned by this RayCluster, network isolation will not be applied. "+
				"Rename the existing NetworkPolicy or use a different RayCluster name to avoid the collision",
			desired.Namespace, desired.Name)
		return fmt.Errorf("NetworkPolicy %s/%s already exists and is not owned by this RayCluster", desired.Namespace, desired.Name)
	}
	if raynetpol.UpToDate(existing, desired) {
		return nil
	}
	existing.Labels, existing.Spec = desired.Labels, desired.Spec
	return r.Children().Update(ctx, s.cluster, existing, childwrite.Noted(childwrite.Update,
		childwrite.Noun(networkPolicyKind, desired), reasonUpdatedNetworkPolicy, reasonFailedToUpdateNetworkPolicy))
}

// deleteStaleNetworkPolicies deletes the policies labelled with the
// cluster's name, controlled by it, and not named in keep. Others with the
// label, such as a user's, stay.
func (r *Reconciler) deleteStaleNetworkPolicies(ctx context.Context, s *scope, keep map[string]bool) error {
	list := &networkingv1.NetworkPolicyList{}
	if err := r.Client.List(ctx, list, client.InNamespace(s.cluster.Namespace),
		client.MatchingLabels{rayv1.LabelCluster: s.cluster.Name}); err != nil {
		return err
	}
	for i := range list.Items {
		p := &list.Items[i]
		if keep[p.Name] || !metav1.IsControlledBy(p, s.cluster) {
			continue
		}
		err := r.Children().Delete(ctx, s.cluster, p, childwrite.Noted(childwrite.Delete,
			childwrite.Noun(networkPolicyKind, p), reasonDeletedNetworkPolicy, reasonFailedToDeleteNetworkPolicy),
			childwrite.DeleteOptions(client.Preconditions{UID: &p.UID}))
		if err != nil {
			return err
		}
	}
	return nil
}
