package installcheck

import (
	"context"
	"fmt"
	"strings"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ray-operator/ray-operator/internal/testing/testenv"
)

// Access is one request a ServiceAccount may or may not make.
type Access struct {
	Group, Resource, Verb, Namespace string
	// Name is the object the request is about; "" for any (and for list,
	// watch and create).
	Name string
}

// String says what a is: verb, resource (and name), group and namespace.
func (a Access) String() string {
	what := a.Resource
	if a.Name != "" {
		what += " " + a.Name
	}
	return fmt.Sprintf("%s %s (group %q) in %q", a.Verb, what, a.Group, a.Namespace)
}

// RuleAccesses expands rules into one Access per group, resource, verb and
// resource name, in namespace ("" for cluster-wide).
func RuleAccesses(rules []rbacv1.PolicyRule, namespace string) []Access {
	var out []Access
	for _, r := range rules {
		names := r.ResourceNames
		if len(names) == 0 {
			names = []string{""}
		}
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				for _, v := range r.Verbs {
					for _, name := range names {
						out = append(out, Access{Group: g, Resource: res, Verb: v, Namespace: namespace, Name: name})
					}
				}
			}
		}
	}
	return out
}

// LeaderElectionAccesses are the requests of leader election in the
// operator's namespace: the Lease and the Event announcing a new leader.
func LeaderElectionAccesses(id Identity) []Access {
	var out []Access
	for _, v := range []string{"get", "create", "update"} {
		out = append(out, Access{Group: "coordination.k8s.io", Resource: "leases", Verb: v, Namespace: id.Namespace})
	}
	return append(out, Access{Resource: "events", Verb: "create", Namespace: id.Namespace})
}

// CheckAllowed asks the API server, for each access, whether id may make
// it, and also that id may not delete nodes, so that a check that grants
// everything is caught.
func CheckAllowed(t testing.TB, c client.Client, id Identity, accesses []Access) {
	t.Helper()
	if len(accesses) < 50 {
		t.Fatalf("only %d accesses to check; the generated role looks truncated", len(accesses))
	}
	for _, a := range accesses {
		if !Allowed(t, c, id, a) {
			t.Errorf("%s may not %s", id.User(), a)
		}
	}
	CheckDenied(t, c, id, []Access{{Resource: "nodes", Verb: "delete"}})
}

// CheckDenied checks that id may make none of accesses.
func CheckDenied(t testing.TB, c client.Client, id Identity, accesses []Access) {
	t.Helper()
	for _, a := range accesses {
		if Allowed(t, c, id, a) {
			t.Errorf("%s may %s", id.User(), a)
		}
	}
}

// Allowed asks the API server with a SubjectAccessReview whether id may
// make a.
func Allowed(t testing.TB, c client.Client, id Identity, a Access) bool {
	t.Helper()
	res, sub, _ := strings.Cut(a.Resource, "/")
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User:   id.User(),
		Groups: id.Groups(),
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Group: a.Group, Resource: res, Subresource: sub, Verb: a.Verb, Namespace: a.Namespace, Name: a.Name,
		},
	}}
	if err := c.Create(t.Context(), sar); err != nil {
		t.Fatalf("SubjectAccessReview: %v", err)
	}
	return sar.Status.Allowed
}

// Apply server-side applies every object in order (Namespace and CRDs
// first, as kubectl and Helm sort them), then waits for the CRDs to be
// established.
func Apply(t testing.TB, env *testenv.Env, objs []*unstructured.Unstructured) {
	t.Helper()
	ctx := t.Context()
	for _, o := range objs {
		err := env.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(o.DeepCopy()), client.FieldOwner("kubectl"), client.ForceOwnership)
		if err != nil {
			t.Fatalf("applying %s %s: %v", o.GetKind(), o.GetName(), err)
		}
	}
	for _, o := range objs {
		if o.GetKind() == "CustomResourceDefinition" {
			WaitEstablished(t, env.Client, o.GetName())
		}
	}
}

// WaitEstablished waits until the CRD name is served.
func WaitEstablished(t testing.TB, c client.Client, name string) {
	t.Helper()
	Poll(t, "CRD "+name+" established", func(ctx context.Context) (bool, error) {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := c.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
			return false, err
		}
		for _, cond := range crd.Status.Conditions {
			if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
}
