// Package clusterwide_test installs the Helm chart with the real helm binary
// into a real API server, the way docs/install.md tells a KubeRay user to
// switch: adopt the CRDs KubeRay's chart left behind, install, upgrade,
// uninstall. In between it checks the operator's permissions with
// SubjectAccessReviews and runs the operator with the installed identity
// and settings.
package clusterwide_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/controlplane"
	"github.com/ray-operator/ray-operator/internal/testing/helmchart"
	"github.com/ray-operator/ray-operator/internal/testing/installcheck"
	"github.com/ray-operator/ray-operator/internal/testing/testenv"
)

// crdNames are the CRDs of config/crd/bases.
var crdNames = []string{"rayclusters.ray.io", "raycronjobs.ray.io", "rayjobs.ray.io", "rayservices.ray.io"}

// TestSwitchFromKubeRay follows docs/install.md's migration from KubeRay's
// chart on an API server that has only KubeRay's CRDs: it adopts them into
// the release with the documented kubectl commands, installs an older
// build of the chart, upgrades to this one (the CRDs must follow), runs the
// operator as installed, uninstalls (the CRDs and the Ray objects must
// stay), and installs again with webhooks.
func TestSwitchFromKubeRay(t *testing.T) {
	env := testenv.Start(t, testenv.WithCRDDirs())
	kubeconfig := helmchart.Kubeconfig(t, env.Kubeconfig)
	bases := generatedCRDs(t)

	// What KubeRay's chart leaves: CRDs applied from its crds/ directory,
	// owned by no release.
	for _, name := range crdNames {
		if err := env.Client.Create(t.Context(), bases[name].DeepCopy()); err != nil {
			t.Fatal(err)
		}
	}
	adoptCRDs(t, kubeconfig)

	release := helmchart.Release{Name: helmchart.ReleaseName, Namespace: helmchart.ReleaseNamespace}
	helmchart.Install(t, "install", kubeconfig, olderChart(t), release)
	if cols := liveCRD(t, env, "rayclusters.ray.io").Spec.Versions[0].AdditionalPrinterColumns; len(cols) != 0 {
		t.Fatalf("after installing the older chart, RayCluster has printer columns %v: the adopted CRD was not updated", cols)
	}

	release.Set = []string{"reconcileConcurrency=3"}
	helmchart.Install(t, "upgrade", kubeconfig, helmchart.Dir(t), release)
	for _, name := range crdNames {
		installcheck.WaitEstablished(t, env.Client, name)
		want := bases[name].Spec.DeepCopy()
		// The API server's default.
		want.Conversion = &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.NoneConverter}
		if diff := cmp.Diff(*want, liveCRD(t, env, name).Spec); diff != "" {
			t.Errorf("after helm upgrade, CRD %s differs from config/crd/bases (-want +got):\n%s", name, diff)
		}
	}

	checkReleaseSize(t, env)

	objs := helmchart.Manifest(t, kubeconfig, helmchart.ReleaseName, helmchart.ReleaseNamespace)
	deploy := installcheck.Convert[appsv1.Deployment](t, installcheck.Find(t, objs, "Deployment", helmchart.ReleaseNamespace, helmchart.ReleaseName))
	settings := installcheck.CheckDeployment(t, deploy, installcheck.DeploymentCheck{Identity: helmchart.Operator(), Objects: objs})
	if settings.Config.ReconcileConcurrency != 3 {
		t.Errorf("after helm upgrade --set reconcileConcurrency=3, the operator runs with %d", settings.Config.ReconcileConcurrency)
	}

	t.Run("the service account holds every permission of the generated role", func(t *testing.T) {
		accesses := installcheck.RuleAccesses(installcheck.GeneratedRole(t).Rules, "some-user-namespace")
		installcheck.CheckAllowed(t, env.Client, helmchart.Operator(), append(accesses, installcheck.LeaderElectionAccesses(helmchart.Operator())...))
	})
	var clusterNamespace string
	t.Run("the operator runs as installed", func(t *testing.T) {
		clusterNamespace = env.Namespace(t)
		installcheck.RunOperator(t, env, settings, helmchart.Operator(), clusterNamespace)
	})

	uninstallKeepsCRDs(t, env, kubeconfig, clusterNamespace)
	installWithWebhooks(t, env, kubeconfig)
}

// adoptCRDs runs the commands docs/install.md gives for handing CRDs
// installed by KubeRay's chart to this chart's release.
func adoptCRDs(t *testing.T, kubeconfig string) {
	t.Helper()
	binDir, err := controlplane.BinDir()
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		append(append([]string{"label", "crd"}, crdNames...), "app.kubernetes.io/managed-by=Helm", "--overwrite"),
		append(append([]string{"annotate", "crd"}, crdNames...), "meta.helm.sh/release-name="+helmchart.ReleaseName, "meta.helm.sh/release-namespace="+helmchart.ReleaseNamespace, "--overwrite"),
	} {
		cmd := exec.CommandContext(t.Context(), filepath.Join(binDir, "kubectl"), append([]string{"--kubeconfig", kubeconfig}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// olderChart is a copy of the chart whose RayCluster CRD lacks the printer
// columns, standing in for a release built from an older API.
func olderChart(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "ray-operator")
	if err := os.CopyFS(dir, os.DirFS(helmchart.Dir(t))); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "files", "crds", "ray.io_rayclusters.yaml")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	columns := regexp.MustCompile(`(?s)\n  - additionalPrinterColumns:\n.*?\n    name: v1\n`)
	if !columns.Match(data) {
		t.Fatal("the RayCluster CRD no longer has printer columns to take away; pick another difference")
	}
	if err := os.WriteFile(path, columns.ReplaceAll(data, []byte("\n  - name: v1\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

// uninstallKeepsCRDs uninstalls the release and checks that the CRDs and
// the RayCluster in namespace stay while the operator's objects go.
func uninstallKeepsCRDs(t *testing.T, env *testenv.Env, kubeconfig, namespace string) {
	t.Helper()
	if out, err := helmchart.Helm(t, "uninstall", helmchart.ReleaseName, "--namespace", helmchart.ReleaseNamespace, "--kubeconfig", kubeconfig); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, name := range crdNames {
		liveCRD(t, env, name)
	}
	clusters := &rayv1.RayClusterList{}
	if err := env.Client.List(t.Context(), clusters, client.InNamespace(namespace)); err != nil || len(clusters.Items) == 0 {
		t.Errorf("after helm uninstall, RayClusters in %s: %d (err %v), want the sample", namespace, len(clusters.Items), err)
	}
	err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: helmchart.ReleaseNamespace, Name: helmchart.ReleaseName}, &appsv1.Deployment{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("after helm uninstall, getting the Deployment: %v, want NotFound", err)
	}
}

func liveCRD(t *testing.T, env *testenv.Env, name string) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := env.Client.Get(t.Context(), client.ObjectKey{Name: name}, crd); err != nil {
		t.Fatalf("CRD %s: %v", name, err)
	}
	return crd
}

// generatedCRDs reads config/crd/bases by CRD name.
func generatedCRDs(t *testing.T) map[string]*apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	out := map[string]*apiextensionsv1.CustomResourceDefinition{}
	for _, name := range crdNames {
		group, plural := "ray.io", strings.TrimSuffix(name, ".ray.io")
		data, err := os.ReadFile(filepath.Join(installcheck.ModuleRoot(t), "config", "crd", "bases", group+"_"+plural+".yaml"))
		if err != nil {
			t.Fatal(err)
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(data, crd); err != nil {
			t.Fatal(err)
		}
		out[name] = crd
	}
	return out
}

// installWithWebhooks installs the chart again (the CRDs kept from before)
// with webhook.enabled and checks that the operator may keep its serving
// certificate and the CA bundle of its own webhook configuration (and write
// no other), and that the API server now sends
// RayClusters to the webhook: with no operator serving it and the policy
// Fail, a create is refused.
func installWithWebhooks(t *testing.T, env *testenv.Env, kubeconfig string) {
	t.Helper()
	release := helmchart.Release{Name: helmchart.ReleaseName, Namespace: helmchart.ReleaseNamespace, Set: []string{"webhook.enabled=true", "crds.install=false"}}
	helmchart.Install(t, "install", kubeconfig, helmchart.Dir(t), release)

	var allowed []installcheck.Access
	for _, verb := range []string{"create", "get", "list", "update", "watch"} {
		allowed = append(allowed, installcheck.Access{Resource: "secrets", Verb: verb, Namespace: helmchart.ReleaseNamespace})
	}
	for _, a := range allowed {
		if !installcheck.Allowed(t, env.Client, helmchart.Operator(), a) {
			t.Errorf("with webhook.enabled, %s may not %s %s in %q", helmchart.Operator().User(), a.Verb, a.Resource, a.Namespace)
		}
	}
	installcheck.CheckWebhookConfigurationWrites(t, env, helmchart.Operator(), helmchart.ReleaseName+"-validating-webhook-configuration")
	// Updating Secrets anywhere is in the operator's ClusterRole, as in
	// KubeRay's (mTLS: the Secrets cert-manager writes get an owner
	// reference); the webhook's Role adds no verb outside its namespace.
	installcheck.CheckDenied(t, env.Client, helmchart.Operator(), []installcheck.Access{
		{Resource: "secrets", Verb: "patch", Namespace: "some-user-namespace"},
		{Group: "admissionregistration.k8s.io", Resource: "validatingwebhookconfigurations", Verb: "delete"},
	})

	cluster := installcheck.Sample(t, "ray-cluster.minimal.yaml")
	cluster.Namespace = env.Namespace(t)
	err := env.Client.Create(t.Context(), cluster)
	if err == nil || !strings.Contains(err.Error(), "vraycluster.kb.io") {
		t.Errorf("creating a RayCluster with the webhooks installed and not served: %v, want a failed call to vraycluster.kb.io", err)
	}
}

// secretLimit is the API server's limit on a Secret's data.
const secretLimit = 1 << 20

// checkReleaseSize checks that the Secrets Helm keeps each revision in
// (chart, values and rendered manifest, CRDs included, compressed) stay
// below three quarters of the 1 MiB a Secret may hold (about 400 KiB in
// 2026-11): with the CRDs as templates, a much larger API would no longer
// install, and this says so first.
func checkReleaseSize(t *testing.T, env *testenv.Env) {
	t.Helper()
	secrets := &corev1.SecretList{}
	if err := env.Client.List(t.Context(), secrets, client.InNamespace(helmchart.ReleaseNamespace), client.MatchingLabels{"owner": "helm", "name": helmchart.ReleaseName}); err != nil {
		t.Fatal(err)
	}
	if len(secrets.Items) == 0 {
		t.Fatal("helm stored no release Secret")
	}
	for _, s := range secrets.Items {
		size := len(s.Data["release"])
		t.Logf("release Secret %s: %d KiB", s.Name, size>>10)
		if size > secretLimit*3/4 {
			t.Errorf("release Secret %s holds %d KiB, more than three quarters of the %d KiB a Secret may hold", s.Name, size>>10, secretLimit>>10)
		}
	}
}
