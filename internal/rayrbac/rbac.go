// Package rayrbac builds the access objects of a RayCluster: the
// ServiceAccount, Role and RoleBinding of the in-tree autoscaler, and the
// Secret holding the Ray auth token.
package rayrbac

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"io"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/naming"
	"github.com/ray-operator/ray-operator/internal/ownerref"
	"github.com/ray-operator/ray-operator/internal/raypod"
)

// tokenBytes is the amount of randomness in a generated auth token.
const tokenBytes = 32

// meta is the metadata all objects of this package share.
func meta(cluster *rayv1.RayCluster, name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name:      name,
		Namespace: cluster.Namespace,
		Labels: map[string]string{
			rayv1.LabelCluster:   cluster.Name,
			rayv1.LabelAppName:   rayv1.AppName,
			rayv1.LabelCreatedBy: rayv1.CreatedByOperator,
		},
		OwnerReferences: []metav1.OwnerReference{ownerref.ForCluster(cluster)},
	}
}

// BuildServiceAccount builds the autoscaler's ServiceAccount, named after the
// cluster. The operator creates it only when the head template names no
// service account; a named one must be created by the user.
func BuildServiceAccount(cluster *rayv1.RayCluster) *corev1.ServiceAccount {
	return &corev1.ServiceAccount{ObjectMeta: meta(cluster, naming.AutoscalerServiceAccountName(cluster))}
}

// BuildRole builds the autoscaler's Role: read and patch Pods (patch for
// in-place resize too) and read and patch RayClusters, whose replicas the
// autoscaler changes.
func BuildRole(cluster *rayv1.RayCluster) *rbacv1.Role {
	return &rbacv1.Role{
		ObjectMeta: meta(cluster, naming.AutoscalerRoleName(cluster.Name)),
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list", "watch", "patch"}},
			{APIGroups: []string{""}, Resources: []string{"pods/resize"}, Verbs: []string{"patch"}},
			{APIGroups: []string{rayv1.GroupVersion.Group}, Resources: []string{"rayclusters"}, Verbs: []string{"get", "patch"}},
		},
	}
}

// BuildRoleBinding binds the autoscaler's Role to its ServiceAccount.
func BuildRoleBinding(cluster *rayv1.RayCluster) *rbacv1.RoleBinding {
	role := naming.AutoscalerRoleName(cluster.Name)
	return &rbacv1.RoleBinding{
		ObjectMeta: meta(cluster, role),
		Subjects: []rbacv1.Subject{{
			Kind:      rbacv1.ServiceAccountKind,
			Name:      naming.AutoscalerServiceAccountName(cluster),
			Namespace: cluster.Namespace,
		}},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role},
	}
}

// BuildAuthSecret builds the Secret holding the cluster's Ray auth token
// under the key "auth_token", named after the cluster and labelled only
// ray.io/cluster, as KubeRay's. The token is 32 bytes
// read from random, base64-encoded; pass nil to use crypto/rand. The
// operator creates it only when authOptions enables tokens and names no
// Secret of the user's.
func BuildAuthSecret(cluster *rayv1.RayCluster, random io.Reader) (*corev1.Secret, error) {
	if random == nil {
		random = rand.Reader
	}
	buf := make([]byte, tokenBytes)
	if _, err := io.ReadFull(random, buf); err != nil {
		return nil, fmt.Errorf("generating the Ray auth token: %w", err)
	}
	m := meta(cluster, naming.ClipName(cluster.Name))
	m.Labels = map[string]string{rayv1.LabelCluster: cluster.Name} // KubeRay's only label on it
	return &corev1.Secret{
		ObjectMeta: m,
		Type:       corev1.SecretTypeOpaque,
		Data:       map[string][]byte{raypod.AuthTokenSecretKey: []byte(base64.StdEncoding.EncodeToString(buf))},
	}, nil
}

// NeedsAuthSecret reports whether the operator must generate the auth
// Secret: token authentication is on (rayv1.IsAuthEnabled),
// Kubernetes token auth is off, and the user named no Secret.
func NeedsAuthSecret(cluster *rayv1.RayCluster) bool {
	if !rayv1.IsAuthEnabled(&cluster.Spec) {
		return false
	}
	o := cluster.Spec.AuthOptions
	if o.EnableK8sTokenAuth != nil && *o.EnableK8sTokenAuth {
		return false
	}
	return o.SecretName == nil || *o.SecretName == ""
}
