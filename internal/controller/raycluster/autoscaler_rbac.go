package raycluster

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ray-operator/ray-operator/internal/naming"
	"github.com/ray-operator/ray-operator/internal/passsteps"
	"github.com/ray-operator/ray-operator/internal/raypod"
	"github.com/ray-operator/ray-operator/internal/rayrbac"
)

// reconcileAutoscalerServiceAccount creates the autoscaler's ServiceAccount.
// A service account the user named in the head template must be created by
// the user: an operator-made one would be deleted with its RayCluster and
// break a RayService's zero-downtime upgrade (KubeRay PR #1128).
func (r *Reconciler) reconcileAutoscalerServiceAccount(ctx context.Context, s *scope) (passsteps.Result, error) {
	if !raypod.AutoscalingEnabled(s.cluster) {
		return passsteps.Result{}, nil
	}
	sa := rayrbac.BuildServiceAccount(s.cluster)
	err := r.Client.Get(ctx, client.ObjectKeyFromObject(sa), &corev1.ServiceAccount{})
	if !apierrors.IsNotFound(err) {
		return passsteps.Result{}, err
	}
	if s.cluster.Spec.HeadGroupSpec.Template.Spec.ServiceAccountName != "" {
		msg := fmt.Sprintf("If users specify ServiceAccountName for the head Pod, they need to create a ServiceAccount themselves. "+
			"However, ServiceAccount %s is not found. Please create one. "+
			"See the PR description of https://github.com/ray-project/kuberay/pull/1128 for more details.", sa.Name)
		r.events.Eventf(s.cluster, nil, corev1.EventTypeWarning, reasonAutoscalerSANotFound, actionCreate,
			"Failed to reconcile RayCluster %s/%s. %s", s.cluster.Namespace, s.cluster.Name, msg)
		return passsteps.Result{}, fmt.Errorf("autoscaler service account %s/%s not found: %s", sa.Namespace, sa.Name, msg)
	}
	return passsteps.Result{}, r.createChild(ctx, s, sa, childEvents{"service account", reasonCreatedServiceAccount, reasonFailedToCreateServiceAccount})
}

// The autoscaler Role grants patch on pods/resize (rayrbac.BuildRole).
// Kubernetes lets a user create a Role only with permissions the user holds
// itself, so the operator needs that permission too, though it never
// resizes a Pod.
//
// +kubebuilder:rbac:groups=core,resources=pods/resize,verbs=patch

// reconcileAutoscalerRole creates the Role that lets the autoscaler read and
// patch Pods and RayClusters.
func (r *Reconciler) reconcileAutoscalerRole(ctx context.Context, s *scope) (passsteps.Result, error) {
	if !raypod.AutoscalingEnabled(s.cluster) {
		return passsteps.Result{}, nil
	}
	return passsteps.Result{}, r.ensureExists(ctx, s, rayrbac.BuildRole(s.cluster), childEvents{"role", reasonCreatedRole, reasonFailedToCreateRole})
}

// reconcileAutoscalerRoleBinding binds that Role to the service account.
func (r *Reconciler) reconcileAutoscalerRoleBinding(ctx context.Context, s *scope) (passsteps.Result, error) {
	if !raypod.AutoscalingEnabled(s.cluster) {
		return passsteps.Result{}, nil
	}
	return passsteps.Result{}, r.ensureExists(ctx, s, rayrbac.BuildRoleBinding(s.cluster),
		childEvents{"role binding", reasonCreatedRoleBinding, reasonFailedToCreateRoleBinding})
}

// reconcileAuthSecret creates the Secret holding a random Ray auth token
// when token authentication is on and the user named no Secret.
func (r *Reconciler) reconcileAuthSecret(ctx context.Context, s *scope) (passsteps.Result, error) {
	if !rayrbac.NeedsAuthSecret(s.cluster) {
		return passsteps.Result{}, nil
	}
	key := client.ObjectKey{Namespace: s.cluster.Namespace, Name: naming.AuthSecretName(s.cluster)}
	err := r.Client.Get(ctx, key, &corev1.Secret{})
	if !apierrors.IsNotFound(err) {
		return passsteps.Result{}, err
	}
	secret, err := rayrbac.BuildAuthSecret(s.cluster, r.Random)
	if err != nil {
		return passsteps.Result{}, err
	}
	return passsteps.Result{}, r.createChild(ctx, s, secret, childEvents{"secret", reasonCreatedSecret, reasonFailedToCreateSecret})
}
