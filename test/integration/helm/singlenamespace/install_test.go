// Package singlenamespace_test installs the Helm chart with
// singleNamespaceInstall into a real API server with the real helm binary
// and runs the operator with the namespaced permissions it gets: Roles in
// the release namespace and the watched ones, no ClusterRole. (A package of
// its own: the operator can run once per test binary.)
package singlenamespace_test

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ray-operator/ray-operator/internal/testing/helmchart"
	"github.com/ray-operator/ray-operator/internal/testing/installcheck"
	"github.com/ray-operator/ray-operator/internal/testing/testenv"
)

const (
	watched   = "team-a"
	unwatched = "team-b"
)

// TestSingleNamespaceInstall installs the chart watching the release
// namespace and team-a, with the CRDs installed beforehand (as a namespace
// administrator's cluster admin would), checks with SubjectAccessReviews
// that the operator may do what its controllers need there and nothing in
// team-b or cluster-wide, and runs it on a RayCluster in team-a.
func TestSingleNamespaceInstall(t *testing.T) {
	env := testenv.Start(t)
	for _, ns := range []string{watched, unwatched} {
		if err := env.Client.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Fatal(err)
		}
	}
	kubeconfig := helmchart.Kubeconfig(t, env.Kubeconfig)
	helmchart.Install(t, "install", kubeconfig, helmchart.Dir(t), helmchart.Release{
		Name: helmchart.ReleaseName, Namespace: helmchart.ReleaseNamespace,
		Set: []string{"singleNamespaceInstall=true", "watchNamespace={" + helmchart.ReleaseNamespace + "," + watched + "}", "crds.install=false"},
	})
	objs := helmchart.Manifest(t, kubeconfig, helmchart.ReleaseName, helmchart.ReleaseNamespace)
	for _, o := range objs {
		if o.GetKind() == "ClusterRole" || o.GetKind() == "ClusterRoleBinding" {
			t.Errorf("singleNamespaceInstall installs %s %s", o.GetKind(), o.GetName())
		}
	}
	deploy := installcheck.Convert[appsv1.Deployment](t, installcheck.Find(t, objs, "Deployment", helmchart.ReleaseNamespace, helmchart.ReleaseName))
	settings := installcheck.CheckDeployment(t, deploy, installcheck.DeploymentCheck{Identity: helmchart.Operator(), Objects: objs})
	if got, want := settings.Config.WatchNamespace, helmchart.ReleaseNamespace+","+watched; got != want {
		t.Errorf("the operator watches %q, want %q", got, want)
	}

	rules := installcheck.GeneratedRole(t).Rules
	t.Run("the service account holds the generated role in the watched namespaces", func(t *testing.T) {
		accesses := installcheck.LeaderElectionAccesses(helmchart.Operator())
		for _, ns := range []string{helmchart.ReleaseNamespace, watched} {
			accesses = append(accesses, installcheck.RuleAccesses(rules, ns)...)
		}
		installcheck.CheckAllowed(t, env.Client, helmchart.Operator(), accesses)
	})
	t.Run("and nothing in other namespaces or cluster-wide", func(t *testing.T) {
		for _, ns := range []string{unwatched, ""} {
			installcheck.CheckDenied(t, env.Client, helmchart.Operator(), installcheck.RuleAccesses(rules, ns))
		}
	})
	t.Run("the operator runs as installed", func(t *testing.T) {
		installcheck.RunOperator(t, env, settings, helmchart.Operator(), watched)
	})
}
