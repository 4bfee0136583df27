// Package config_test installs the deployable configuration under config/
// the way a user does (kustomize build of config/default, every object
// applied to a real API server) and runs the operator with the identity and
// the flags that configuration gives it, so a missing permission, a wrong
// binding or a flag the binary rejects fails here rather than in a cluster.
package config_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/ray-operator/ray-operator/internal/controlplane"
	"github.com/ray-operator/ray-operator/internal/features"
	"github.com/ray-operator/ray-operator/internal/testing/installcheck"
	"github.com/ray-operator/ray-operator/internal/testing/testenv"
	"github.com/ray-operator/ray-operator/internal/webhooks"
)

const (
	installNamespace = "ray-system"
	operatorName     = "kuberay-operator"
)

// operatorID is the ServiceAccount config/rbac installs.
var operatorID = installcheck.Identity{Namespace: installNamespace, ServiceAccount: operatorName}

func TestKustomizationsBuild(t *testing.T) {
	for _, dir := range []string{"crd", "rbac", "manager", "default", "webhook", "default-with-webhooks", "default-with-cert-manager",
		"default-with-volcano", "default-with-scheduler-plugins", "default-with-kubernetes-was", "default-with-monitoring"} {
		t.Run(dir, func(t *testing.T) {
			if objs := build(t, dir); len(objs) == 0 {
				t.Errorf("kustomize build config/%s produced no objects", dir)
			}
		})
	}
}

// TestDefaultInstall checks what config/default contains, applies it and
// runs the operator as its service account with its Deployment's flags.
func TestDefaultInstall(t *testing.T) {
	objs := build(t, "default")
	checkInventory(t, objs)

	role := installcheck.GeneratedRole(t)
	builtRole := installcheck.Convert[rbacv1.ClusterRole](t, installcheck.Find(t, objs, "ClusterRole", "", operatorName))
	if diff := cmp.Diff(role.Rules, builtRole.Rules); diff != "" {
		t.Errorf("ClusterRole %s differs from the generated config/rbac/role.yaml (-want +got):\n%s", operatorName, diff)
	}
	deploy := installcheck.Convert[appsv1.Deployment](t, installcheck.Find(t, objs, "Deployment", installNamespace, operatorName))
	settings := installcheck.CheckDeployment(t, deploy, installcheck.DeploymentCheck{Identity: operatorID, Objects: objs})
	// The kustomize Deployment also requests memory explicitly.
	if deploy.Spec.Template.Spec.Containers[0].Resources.Requests.Memory().IsZero() {
		t.Error("the container must request memory")
	}

	env := testenv.Start(t, testenv.WithCRDDirs())
	installcheck.Apply(t, env, objs)

	t.Run("the service account holds every permission of the generated role", func(t *testing.T) {
		accesses := installcheck.RuleAccesses(role.Rules, "some-user-namespace")
		installcheck.CheckAllowed(t, env.Client, operatorID, append(accesses, installcheck.LeaderElectionAccesses(operatorID)...))
	})

	t.Run("the operator runs as its service account with the Deployment's flags", func(t *testing.T) {
		installcheck.RunOperator(t, env, settings, operatorID, "")
	})
}

// TestBatchSchedulerInstall checks the overlays that choose a batch
// scheduler with a PodGroup API (kubernetes-was: the KubernetesWAS gate and
// scheduling.k8s.io Workloads and PodGroups): the operator runs with that scheduler, its
// service account holds the plugin's generated ClusterRole (and may manage
// PodGroups of that API only), and the rest is config/default.
func TestBatchSchedulerInstall(t *testing.T) {
	for _, c := range []struct{ name, group, other string }{
		{"volcano", "scheduling.volcano.sh", "scheduling.x-k8s.io"},
		{"scheduler-plugins", "scheduling.x-k8s.io", "scheduling.volcano.sh"},
		{"kubernetes-was", "scheduling.k8s.io", "scheduling.volcano.sh"},
	} {
		t.Run(c.name, func(t *testing.T) {
			objs := build(t, "default-with-"+c.name)
			deploy := installcheck.Convert[appsv1.Deployment](t, installcheck.Find(t, objs, "Deployment", installNamespace, operatorName))
			settings := installcheck.CheckDeployment(t, deploy, installcheck.DeploymentCheck{Identity: operatorID, Objects: objs})
			wantScheduler, wantWAS := c.name, false
			if c.name == "kubernetes-was" { // chosen by the feature gate, not --batch-scheduler
				wantScheduler, wantWAS = "", true
			}
			if settings.Config.BatchScheduler != wantScheduler || settings.Features.Enabled(features.KubernetesWAS) != wantWAS {
				t.Errorf("the operator runs with batchScheduler %q and KubernetesWAS %v, want %q and %v",
					settings.Config.BatchScheduler, settings.Features.Enabled(features.KubernetesWAS), wantScheduler, wantWAS)
			}
			data, err := os.ReadFile(filepath.Join(installcheck.ModuleRoot(t), "config", "components", "batch-scheduler-"+c.name, "role.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			generated := &rbacv1.ClusterRole{}
			if err := yaml.UnmarshalStrict(bytes.TrimPrefix(data, []byte("---\n")), generated); err != nil {
				t.Fatal(err)
			}
			role := installcheck.Convert[rbacv1.ClusterRole](t, installcheck.Find(t, objs, "ClusterRole", "", operatorName+"-"+c.name))
			if diff := cmp.Diff(generated.Rules, role.Rules); diff != "" {
				t.Errorf("ClusterRole differs from the generated one (-want +got):\n%s", diff)
			}
			binding := installcheck.Convert[rbacv1.ClusterRoleBinding](t, installcheck.Find(t, objs, "ClusterRoleBinding", "", operatorName+"-"+c.name))
			if len(binding.Subjects) != 1 || binding.Subjects[0].Namespace != installNamespace || binding.Subjects[0].Name != operatorName {
				t.Errorf("ClusterRoleBinding subjects %+v", binding.Subjects)
			}
			env := testenv.Start(t, testenv.WithCRDDirs())
			installcheck.Apply(t, env, objs)
			for _, res := range role.Rules[0].Resources { // podgroups (and workloads for kubernetes-was)
				for _, verb := range role.Rules[0].Verbs {
					if !installcheck.Allowed(t, env.Client, operatorID, installcheck.Access{Group: c.group, Resource: res, Verb: verb, Namespace: "some-user-namespace"}) {
						t.Errorf("%s may not %s %s %s", operatorID.User(), verb, c.group, res)
					}
				}
			}
			installcheck.CheckDenied(t, env.Client, operatorID, []installcheck.Access{{Group: c.other, Resource: "podgroups", Verb: "create", Namespace: "some-user-namespace"}})
		})
	}
}

// TestWebhookInstall checks that config/default-with-webhooks gives the
// operator webhook settings that match the objects it installs (port,
// certificate mount, Secret, Service, configuration name), that the
// ServiceAccount may keep its certificate and the CA bundle of its own
// configuration but write no other, and that the cert-manager overlay
// hands the certificate over to cert-manager.
func TestWebhookInstall(t *testing.T) {
	objs := build(t, "default-with-webhooks")
	deploy := installcheck.Convert[appsv1.Deployment](t, installcheck.Find(t, objs, "Deployment", installNamespace, operatorName))
	hooks := installcheck.CheckDeployment(t, deploy, installcheck.DeploymentCheck{Identity: operatorID, Objects: objs}).Webhooks
	if !hooks.Enabled || hooks.CertManagement != webhooks.CertsInternal || hooks.Namespace != installNamespace {
		t.Fatalf("webhook settings = %+v, want enabled, internal certificates, namespace %s", hooks, installNamespace)
	}
	checkWebhookWiring(t, objs, deploy, hooks)

	env := testenv.Start(t, testenv.WithCRDDirs())
	installcheck.Apply(t, env, objs)
	for _, a := range []installcheck.Access{
		{Resource: "secrets", Verb: "create", Namespace: installNamespace},
		{Resource: "secrets", Verb: "update", Namespace: installNamespace},
		{Resource: "secrets", Verb: "watch", Namespace: installNamespace},
	} {
		if !installcheck.Allowed(t, env.Client, operatorID, a) {
			t.Errorf("%s may not %s %s in %q", operatorID.User(), a.Verb, a.Resource, a.Namespace)
		}
	}
	installcheck.CheckWebhookConfigurationWrites(t, env, operatorID, hooks.ConfigurationName)

	withCM := build(t, "default-with-cert-manager")
	cmDeploy := installcheck.Convert[appsv1.Deployment](t, installcheck.Find(t, withCM, "Deployment", installNamespace, operatorName))
	cmHooks := installcheck.CheckDeployment(t, cmDeploy, installcheck.DeploymentCheck{Identity: operatorID, Objects: withCM}).Webhooks
	if cmHooks.CertManagement != webhooks.CertsExternal {
		t.Errorf("cert-manager overlay runs with --webhook-cert-management=%s, want external", cmHooks.CertManagement)
	}
	cert := installcheck.Find(t, withCM, "Certificate", installNamespace, "kuberay-webhook-cert")
	secretName, _, _ := unstructured.NestedString(cert.Object, "spec", "secretName")
	dnsNames, _, _ := unstructured.NestedStringSlice(cert.Object, "spec", "dnsNames")
	if secretName != cmHooks.SecretName || !slices.Contains(dnsNames, cmHooks.ServiceName+"."+installNamespace+".svc") {
		t.Errorf("Certificate writes %q for %v, want Secret %q for %s.%s.svc", secretName, dnsNames, cmHooks.SecretName, cmHooks.ServiceName, installNamespace)
	}
	cfg := installcheck.Find(t, withCM, "ValidatingWebhookConfiguration", "", cmHooks.ConfigurationName)
	if got := cfg.GetAnnotations()["cert-manager.io/inject-ca-from"]; got != installNamespace+"/kuberay-webhook-cert" {
		t.Errorf("inject-ca-from = %q", got)
	}
}

// checkWebhookWiring compares the webhook settings with the objects.
func checkWebhookWiring(t *testing.T, objs []*unstructured.Unstructured, deploy *appsv1.Deployment, hooks webhooks.Options) {
	t.Helper()
	installcheck.CheckWebhookServing(t, deploy, hooks)
	svc := installcheck.Convert[corev1.Service](t, installcheck.Find(t, objs, "Service", hooks.Namespace, hooks.ServiceName))
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].TargetPort.StrVal != "webhook-server" {
		t.Errorf("webhook Service %s ports %+v, want targetPort webhook-server", svc.Name, svc.Spec.Ports)
	}
	cfg := installcheck.Convert[admissionregistrationv1.ValidatingWebhookConfiguration](t, installcheck.Find(t, objs, "ValidatingWebhookConfiguration", "", hooks.ConfigurationName))
	for _, wh := range cfg.Webhooks {
		s := wh.ClientConfig.Service
		if s == nil || s.Name != hooks.ServiceName || s.Namespace != hooks.Namespace {
			t.Errorf("webhook %s calls %+v, want Service %s/%s", wh.Name, s, hooks.Namespace, hooks.ServiceName)
		}
	}
}

// TestKubectlApply runs the command docs/install.md gives, with the real
// kubectl (and its bundled kustomize), against an empty API server. It is
// client-side apply on purpose: that stores each object in an annotation
// limited to 256 KiB, and fails once a CRD grows past it.
func TestKubectlApply(t *testing.T) {
	binDir, err := controlplane.BinDir()
	if err != nil {
		t.Fatal(err)
	}
	env := testenv.Start(t, testenv.WithCRDDirs())
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, env.Kubeconfig, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), filepath.Join(binDir, "kubectl"), "--kubeconfig", kubeconfig,
		"apply", "-k", filepath.Join(installcheck.ModuleRoot(t), "config", "default"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl apply -k config/default: %v\n%s", err, out)
	}
	deploy := &appsv1.Deployment{}
	if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: installNamespace, Name: operatorName}, deploy); err != nil {
		t.Fatalf("after kubectl apply: %v\n%s", err, out)
	}
}

// build runs kustomize build on config/<dir>.
func build(t *testing.T, dir string) []*unstructured.Unstructured {
	t.Helper()
	return installcheck.Kustomize(t, dir)
}

// checkInventory checks the kinds and names config/default installs and
// that every namespaced object and binding subject is in ray-system.
func checkInventory(t *testing.T, objs []*unstructured.Unstructured) {
	t.Helper()
	var got []string
	for _, o := range objs {
		got = append(got, o.GetKind()+"/"+o.GetName())
		if ns := o.GetNamespace(); ns != "" && ns != installNamespace {
			t.Errorf("%s/%s is in namespace %q, want %q", o.GetKind(), o.GetName(), ns, installNamespace)
		}
		if o.GetKind() == "ClusterRoleBinding" || o.GetKind() == "RoleBinding" {
			subjects, _, _ := unstructured.NestedSlice(o.Object, "subjects")
			want := []any{map[string]any{"kind": "ServiceAccount", "name": operatorName, "namespace": installNamespace}}
			if diff := cmp.Diff(want, subjects); diff != "" {
				t.Errorf("%s/%s subjects (-want +got):\n%s", o.GetKind(), o.GetName(), diff)
			}
		}
	}
	slices.Sort(got)
	want := []string{
		"ClusterRole/kuberay-operator",
		"ClusterRoleBinding/kuberay-operator",
		"CustomResourceDefinition/rayclusters.ray.io",
		"CustomResourceDefinition/raycronjobs.ray.io",
		"CustomResourceDefinition/rayjobs.ray.io",
		"CustomResourceDefinition/rayservices.ray.io",
		"Deployment/kuberay-operator",
		"Namespace/ray-system",
		"Role/kuberay-operator-leader-election",
		"RoleBinding/kuberay-operator-leader-election",
		"Service/kuberay-operator",
		"ServiceAccount/kuberay-operator",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("objects of config/default (-want +got):\n%s", diff)
	}
}
