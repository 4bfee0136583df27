// Package installcheck checks an installation of the operator the way a
// cluster would see it: the Deployment's arguments parsed by the operator's
// own flag parser, the ServiceAccount's permissions asked of a real API
// server with SubjectAccessReviews, and the operator run with that identity
// and those settings until it has reconciled a RayCluster. The kustomize
// tree under config/ and the Helm chart under helm-chart/ are both checked
// with it.
package installcheck

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/controlplane"
)

// BinaryPath is where images put the operator binary (docs/install.md).
const BinaryPath = "/ray-operator"

// Identity is the operator's ServiceAccount.
type Identity struct {
	// Namespace is the ServiceAccount's namespace, where the operator runs
	// and holds its leader Lease.
	Namespace string
	// ServiceAccount is the ServiceAccount's name.
	ServiceAccount string
}

// User is the user name the API server gives the ServiceAccount's tokens.
func (id Identity) User() string {
	return "system:serviceaccount:" + id.Namespace + ":" + id.ServiceAccount
}

// Groups are the groups the API server puts the ServiceAccount's tokens in.
func (id Identity) Groups() []string {
	return []string{"system:serviceaccounts", "system:serviceaccounts:" + id.Namespace, "system:authenticated"}
}

// ModuleRoot is the repository root.
func ModuleRoot(t testing.TB) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	root, err := controlplane.ModuleRoot(wd)
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// GeneratedRole reads config/rbac/role.yaml, which `make generate` writes
// from the controllers' +kubebuilder:rbac markers (and `make
// verify-generated` keeps in step with them).
func GeneratedRole(t testing.TB) *rbacv1.ClusterRole {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(ModuleRoot(t), "config", "rbac", "role.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	role := &rbacv1.ClusterRole{}
	if err := yaml.UnmarshalStrict(bytes.TrimPrefix(data, []byte("---\n")), role); err != nil {
		t.Fatalf("config/rbac/role.yaml: %v", err)
	}
	if len(role.Rules) == 0 {
		t.Fatal("config/rbac/role.yaml has no rules")
	}
	return role
}

// Find returns the object of objs with that kind, namespace and name, and
// fails the test when there is none.
func Find(t testing.TB, objs []*unstructured.Unstructured, kind, namespace, name string) *unstructured.Unstructured {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() == kind && o.GetNamespace() == namespace && o.GetName() == name {
			return o
		}
	}
	t.Fatalf("no %s %s/%s among the installed objects", kind, namespace, name)
	return nil
}

// Convert turns u into a typed object, failing on fields T does not have.
func Convert[T any](t testing.TB, u *unstructured.Unstructured) *T {
	t.Helper()
	out := new(T)
	if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(u.Object, out, true); err != nil {
		t.Fatalf("%s %s: %v", u.GetKind(), u.GetName(), err)
	}
	return out
}

// Sample reads the RayCluster config/samples/<name>.
func Sample(t testing.TB, name string) *rayv1.RayCluster {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(ModuleRoot(t), "config", "samples", name))
	if err != nil {
		t.Fatal(err)
	}
	cluster := &rayv1.RayCluster{}
	if err := yaml.Unmarshal(data, cluster); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return cluster
}
