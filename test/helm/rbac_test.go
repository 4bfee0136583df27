package helm_test

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/ray-operator/ray-operator/internal/testing/helmchart"
	"github.com/ray-operator/ray-operator/internal/testing/installcheck"
)

// TestOperatorRulesAreGenerated checks that wherever the chart grants the
// operator its permissions, ClusterRole or Roles, the rules are exactly
// those of the generated config/rbac/role.yaml, and that the leader
// election Role has those of config/rbac/leader_election_role.yaml.
func TestOperatorRulesAreGenerated(t *testing.T) {
	generated := installcheck.GeneratedRole(t).Rules
	leader := readRole(t, "leader_election_role.yaml").Rules
	tests := []struct {
		name   string
		values string
		set    []string
		// roles are the kind/namespace of each operator role to find.
		roles []string
		// absent are kinds the rendering must not contain.
		absent []string
	}{
		{name: "cluster-wide", values: "default", roles: []string{"ClusterRole/"}},
		{name: "cluster-wide, watching some namespaces", values: "kuberay", roles: []string{"ClusterRole/"}},
		{name: "single namespace, watching two others", values: "single-namespace",
			roles:  []string{"Role/ray-system", "Role/team-a", "Role/team-b"},
			absent: []string{"ClusterRole", "ClusterRoleBinding"}},
		{name: "single namespace, watched namespaces left to the user", values: "single-namespace", set: []string{"crNamespacedRbacEnable=false"},
			roles:  []string{"Role/ray-system"},
			absent: []string{"ClusterRole", "ClusterRoleBinding"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs := render(t, release(tt.values, append(tt.set, "crds.install=false")...))
			var got []string
			for _, o := range objs {
				if (o.GetKind() == "Role" || o.GetKind() == "ClusterRole") && o.GetName() == helmchart.ReleaseName {
					got = append(got, o.GetKind()+"/"+o.GetNamespace())
					checkRules(t, o, generated)
					checkBinding(t, objs, o)
				}
				if slices.Contains(tt.absent, o.GetKind()) {
					t.Errorf("unexpected %s %s", o.GetKind(), o.GetName())
				}
			}
			if diff := cmp.Diff(tt.roles, got); diff != "" {
				t.Errorf("operator roles (-want +got):\n%s", diff)
			}
			le := installcheck.Find(t, objs, "Role", helmchart.ReleaseNamespace, helmchart.ReleaseName+"-leader-election")
			checkRules(t, le, leader)
			checkBinding(t, objs, le)
		})
	}
}

// TestRBACDisabled checks that rbacEnable=false renders no RBAC object.
func TestRBACDisabled(t *testing.T) {
	for _, o := range render(t, release("webhook", "rbacEnable=false", "crds.install=false")) {
		if o.GetObjectKind().GroupVersionKind().Group == rbacv1.GroupName {
			t.Errorf("rbacEnable=false renders %s %s", o.GetKind(), o.GetName())
		}
	}
}

// TestUserRoles checks the editor and viewer roles of each kind, under
// KubeRay's names: ClusterRoles, or Roles in the release namespace.
func TestUserRoles(t *testing.T) {
	for _, tt := range []struct {
		values, kind, namespace string
	}{
		{"default", "ClusterRole", ""},
		{"single-namespace", "Role", helmchart.ReleaseNamespace},
	} {
		t.Run(tt.values, func(t *testing.T) {
			objs := render(t, release(tt.values, "crds.install=false"))
			for _, res := range []string{"rayclusters", "rayjobs", "rayservices", "raycronjobs"} {
				singular := res[:len(res)-1]
				editor := installcheck.Convert[rbacv1.ClusterRole](t, installcheck.Find(t, objs, tt.kind, tt.namespace, singular+"-editor-role"))
				viewer := installcheck.Convert[rbacv1.ClusterRole](t, installcheck.Find(t, objs, tt.kind, tt.namespace, singular+"-viewer-role"))
				want := func(verbs ...string) []rbacv1.PolicyRule {
					return []rbacv1.PolicyRule{
						{APIGroups: []string{"ray.io"}, Resources: []string{res}, Verbs: verbs},
						{APIGroups: []string{"ray.io"}, Resources: []string{res + "/status"}, Verbs: []string{"get"}},
					}
				}
				if diff := cmp.Diff(want("create", "delete", "get", "list", "patch", "update", "watch"), editor.Rules); diff != "" {
					t.Errorf("%s rules (-want +got):\n%s", editor.Name, diff)
				}
				if diff := cmp.Diff(want("get", "list", "watch"), viewer.Rules); diff != "" {
					t.Errorf("%s rules (-want +got):\n%s", viewer.Name, diff)
				}
			}
		})
	}
}

// readRole reads a role under config/rbac.
func readRole(t *testing.T, name string) *rbacv1.ClusterRole {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(installcheck.ModuleRoot(t), "config", "rbac", name))
	if err != nil {
		t.Fatal(err)
	}
	role := &rbacv1.ClusterRole{}
	if err := yaml.Unmarshal(bytes.TrimPrefix(data, []byte("---\n")), role); err != nil {
		t.Fatalf("config/rbac/%s: %v", name, err)
	}
	if len(role.Rules) == 0 {
		t.Fatalf("config/rbac/%s has no rules", name)
	}
	return role
}

func checkRules(t *testing.T, role *unstructured.Unstructured, want []rbacv1.PolicyRule) {
	t.Helper()
	got := installcheck.Convert[rbacv1.ClusterRole](t, role).Rules
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s %s/%s rules differ from config/rbac (-want +got):\n%s", role.GetKind(), role.GetNamespace(), role.GetName(), diff)
	}
}

// checkBinding checks that a binding of the same name and namespace grants
// role to the operator's ServiceAccount.
func checkBinding(t *testing.T, objs []*unstructured.Unstructured, role *unstructured.Unstructured) {
	t.Helper()
	b := installcheck.Convert[rbacv1.RoleBinding](t, installcheck.Find(t, objs, role.GetKind()+"Binding", role.GetNamespace(), role.GetName()))
	want := rbacv1.RoleBinding{
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: role.GetKind(), Name: role.GetName()},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: helmchart.Operator().ServiceAccount, Namespace: helmchart.Operator().Namespace}},
	}
	if diff := cmp.Diff(want.RoleRef, b.RoleRef); diff != "" {
		t.Errorf("%s %s roleRef (-want +got):\n%s", b.Kind, b.Name, diff)
	}
	if diff := cmp.Diff(want.Subjects, b.Subjects); diff != "" {
		t.Errorf("%s %s subjects (-want +got):\n%s", b.Kind, b.Name, diff)
	}
}

// TestBatchSchedulerRules: choosing a scheduler with a PodGroup API renders
// its generated ClusterRole (config/components/batch-scheduler-<name>) and
// a binding; the deprecated batchScheduler.enabled means volcano, the
// KubernetesWAS feature gate kubernetes-was (its Workloads and PodGroups); a
// scheduler without PodGroups, or none, renders no PodGroup rule.
func TestBatchSchedulerRules(t *testing.T) {
	for _, tc := range []struct {
		set       string
		scheduler string // "" when no PodGroup role is expected
	}{
		{"batchScheduler.name=volcano", "volcano"},
		{"batchScheduler.enabled=true", "volcano"},
		{"batchScheduler.name=scheduler-plugins", "scheduler-plugins"},
		{"batchScheduler.name=yunikorn", ""},
		{"batchScheduler.name=kai-scheduler", ""},
		{"featureGates KubernetesWAS", "kubernetes-was"},
	} {
		t.Run(tc.set, func(t *testing.T) {
			r := release("default", "crds.install=false", tc.set)
			if tc.scheduler == "kubernetes-was" {
				r = release("kubernetes-was", "crds.install=false")
			}
			objs := render(t, r)
			var roles []string
			for _, o := range objsWithPodGroupRules(t, objs) {
				roles = append(roles, o.GetName())
			}
			if tc.scheduler == "" {
				if len(roles) != 0 {
					t.Errorf("roles %v grant PodGroups, want none", roles)
				}
				return
			}
			role := installcheck.Find(t, objs, "ClusterRole", "", "kuberay-operator-"+tc.scheduler)
			checkRules(t, role, readComponentRole(t, tc.scheduler).Rules)
			checkBinding(t, objs, role)
			if len(roles) != 1 {
				t.Errorf("roles %v grant PodGroups, want only %s", roles, role.GetName())
			}
		})
	}
}

func objsWithPodGroupRules(t *testing.T, objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() != "ClusterRole" && o.GetKind() != "Role" {
			continue
		}
		for _, r := range installcheck.Convert[rbacv1.ClusterRole](t, o).Rules {
			if slices.Contains(r.Resources, "podgroups") {
				out = append(out, o)
				break
			}
		}
	}
	return out
}

// readComponentRole reads the generated PodGroup role of a scheduler.
func readComponentRole(t *testing.T, scheduler string) *rbacv1.ClusterRole {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(installcheck.ModuleRoot(t), "config", "components", "batch-scheduler-"+scheduler, "role.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	role := &rbacv1.ClusterRole{}
	if err := yaml.Unmarshal(bytes.TrimPrefix(data, []byte("---\n")), role); err != nil {
		t.Fatal(err)
	}
	return role
}
