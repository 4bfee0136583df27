// Package config_test installs the deployable configuration under config/
// the way a user does (kustomize build of config/default, every object
// applied to a real API server) and runs the operator with the identity and
// the flags that configuration gives it, so a missing permission, a wrong
// binding or a flag the binary rejects fails here rather than in a cluster.
package config_test

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/controlplane"
	"github.com/ray-operator/ray-operator/internal/operator"
	"github.com/ray-operator/ray-operator/internal/testing/testenv"
	"github.com/ray-operator/ray-operator/internal/webhooks"
)

const (
	installNamespace = "ray-system"
	operatorName     = "kuberay-operator"
	operatorUser     = "system:serviceaccount:" + installNamespace + ":" + operatorName
	binaryPath       = "/ray-operator"
	waitTimeout      = 60 * time.Second
)

// operatorRuns records that runOperator started an operator.
var operatorRuns atomic.Bool

// operatorGroups are the groups the API server puts a service account's
// token in.
var operatorGroups = []string{"system:serviceaccounts", "system:serviceaccounts:" + installNamespace, "system:authenticated"}

func TestKustomizationsBuild(t *testing.T) {
	for _, dir := range []string{"crd", "rbac", "manager", "default", "webhook", "default-with-webhooks", "default-with-cert-manager",
		"default-with-volcano", "default-with-scheduler-plugins"} {
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

	role := generatedRole(t)
	builtRole := convert[rbacv1.ClusterRole](t, find(t, objs, "ClusterRole", operatorName))
	if diff := cmp.Diff(role.Rules, builtRole.Rules); diff != "" {
		t.Errorf("ClusterRole %s differs from the generated config/rbac/role.yaml (-want +got):\n%s", operatorName, diff)
	}
	deploy := convert[appsv1.Deployment](t, find(t, objs, "Deployment", operatorName))
	settings := checkDeployment(t, deploy)

	env := testenv.Start(t, testenv.WithCRDDirs())
	apply(t, env, objs)

	t.Run("the service account holds every permission of the generated role", func(t *testing.T) {
		checkAccess(t, env.Client, role.Rules)
	})

	t.Run("the operator runs as its service account with the Deployment's flags", func(t *testing.T) {
		runOperator(t, env, settings)
	})
}

// TestBatchSchedulerInstall checks the overlays that choose a batch
// scheduler with a PodGroup API: the operator runs with that scheduler, its
// service account holds the plugin's generated ClusterRole (and may manage
// PodGroups of that API only), and the rest is config/default.
func TestBatchSchedulerInstall(t *testing.T) {
	for _, c := range []struct{ name, group, other string }{
		{"volcano", "scheduling.volcano.sh", "scheduling.x-k8s.io"},
		{"scheduler-plugins", "scheduling.x-k8s.io", "scheduling.volcano.sh"},
	} {
		t.Run(c.name, func(t *testing.T) {
			objs := build(t, "default-with-"+c.name)
			settings := checkDeployment(t, convert[appsv1.Deployment](t, find(t, objs, "Deployment", operatorName)))
			if settings.Config.BatchScheduler != c.name {
				t.Errorf("the operator runs with batchScheduler %q, want %q", settings.Config.BatchScheduler, c.name)
			}
			data, err := os.ReadFile(filepath.Join(moduleRoot(t), "config", "components", "batch-scheduler-"+c.name, "role.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			generated := &rbacv1.ClusterRole{}
			if err := yaml.UnmarshalStrict(bytes.TrimPrefix(data, []byte("---\n")), generated); err != nil {
				t.Fatal(err)
			}
			role := convert[rbacv1.ClusterRole](t, find(t, objs, "ClusterRole", operatorName+"-"+c.name))
			if diff := cmp.Diff(generated.Rules, role.Rules); diff != "" {
				t.Errorf("ClusterRole differs from the generated one (-want +got):\n%s", diff)
			}
			binding := convert[rbacv1.ClusterRoleBinding](t, find(t, objs, "ClusterRoleBinding", operatorName+"-"+c.name))
			if len(binding.Subjects) != 1 || binding.Subjects[0].Namespace != installNamespace || binding.Subjects[0].Name != operatorName {
				t.Errorf("ClusterRoleBinding subjects %+v", binding.Subjects)
			}
			env := testenv.Start(t, testenv.WithCRDDirs())
			apply(t, env, objs)
			for _, verb := range role.Rules[0].Verbs {
				if !allowed(t, env.Client, c.group, "podgroups", verb, "some-user-namespace") {
					t.Errorf("%s may not %s %s podgroups", operatorUser, verb, c.group)
				}
			}
			if allowed(t, env.Client, c.other, "podgroups", "create", "some-user-namespace") {
				t.Errorf("%s may create %s podgroups without choosing that scheduler", operatorUser, c.other)
			}
		})
	}
}

// TestWebhookInstall checks that config/default-with-webhooks gives the
// operator webhook settings that match the objects it installs (port,
// certificate mount, Secret, Service, configuration name), that the
// ServiceAccount may keep its certificate and CA bundle, and that the
// cert-manager overlay hands the certificate over to cert-manager.
func TestWebhookInstall(t *testing.T) {
	objs := build(t, "default-with-webhooks")
	deploy := convert[appsv1.Deployment](t, find(t, objs, "Deployment", operatorName))
	hooks := checkDeployment(t, deploy).Webhooks
	if !hooks.Enabled || hooks.CertManagement != webhooks.CertsInternal || hooks.Namespace != installNamespace {
		t.Fatalf("webhook settings = %+v, want enabled, internal certificates, namespace %s", hooks, installNamespace)
	}
	checkWebhookWiring(t, objs, deploy, hooks)

	env := testenv.Start(t, testenv.WithCRDDirs())
	apply(t, env, objs)
	for _, check := range []struct{ group, resource, verb, namespace string }{
		{"", "secrets", "create", installNamespace}, {"", "secrets", "update", installNamespace}, {"", "secrets", "watch", installNamespace},
		{"admissionregistration.k8s.io", "validatingwebhookconfigurations", "update", ""},
		{"admissionregistration.k8s.io", "validatingwebhookconfigurations", "watch", ""},
	} {
		if !allowed(t, env.Client, check.group, check.resource, check.verb, check.namespace) {
			t.Errorf("%s may not %s %s in %q", operatorUser, check.verb, check.resource, check.namespace)
		}
	}

	withCM := build(t, "default-with-cert-manager")
	cmHooks := checkDeployment(t, convert[appsv1.Deployment](t, find(t, withCM, "Deployment", operatorName))).Webhooks
	if cmHooks.CertManagement != webhooks.CertsExternal {
		t.Errorf("cert-manager overlay runs with --webhook-cert-management=%s, want external", cmHooks.CertManagement)
	}
	cert := find(t, withCM, "Certificate", "kuberay-webhook-cert")
	secretName, _, _ := unstructured.NestedString(cert.Object, "spec", "secretName")
	dnsNames, _, _ := unstructured.NestedStringSlice(cert.Object, "spec", "dnsNames")
	if secretName != cmHooks.SecretName || !slices.Contains(dnsNames, cmHooks.ServiceName+"."+installNamespace+".svc") {
		t.Errorf("Certificate writes %q for %v, want Secret %q for %s.%s.svc", secretName, dnsNames, cmHooks.SecretName, cmHooks.ServiceName, installNamespace)
	}
	cfg := find(t, withCM, "ValidatingWebhookConfiguration", cmHooks.ConfigurationName)
	if got := cfg.GetAnnotations()["cert-manager.io/inject-ca-from"]; got != installNamespace+"/kuberay-webhook-cert" {
		t.Errorf("inject-ca-from = %q", got)
	}
}

// checkWebhookWiring compares the webhook settings with the objects.
func checkWebhookWiring(t *testing.T, objs []*unstructured.Unstructured, deploy *appsv1.Deployment, hooks webhooks.Options) {
	t.Helper()
	c := deploy.Spec.Template.Spec.Containers[0]
	var port int32
	for _, p := range c.Ports {
		if p.Name == "webhook-server" {
			port = p.ContainerPort
		}
	}
	if int(port) != hooks.Port {
		t.Errorf("containerPort webhook-server = %d, want --webhook-port %d", port, hooks.Port)
	}
	mounted := map[string]string{}
	for _, m := range c.VolumeMounts {
		mounted[m.Name] = m.MountPath
	}
	if !slices.ContainsFunc(deploy.Spec.Template.Spec.Volumes, func(v corev1.Volume) bool {
		return v.Secret != nil && v.Secret.SecretName == hooks.SecretName && mounted[v.Name] == hooks.CertDir
	}) {
		t.Errorf("no volume mounts Secret %s at %s", hooks.SecretName, hooks.CertDir)
	}
	svc := convert[corev1.Service](t, find(t, objs, "Service", hooks.ServiceName))
	if svc.Namespace != hooks.Namespace || len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].TargetPort.StrVal != "webhook-server" {
		t.Errorf("webhook Service %s/%s ports %+v, want namespace %s and targetPort webhook-server", svc.Namespace, svc.Name, svc.Spec.Ports, hooks.Namespace)
	}
	cfg := convert[admissionregistrationv1.ValidatingWebhookConfiguration](t, find(t, objs, "ValidatingWebhookConfiguration", hooks.ConfigurationName))
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
		"apply", "-k", filepath.Join(moduleRoot(t), "config", "default"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl apply -k config/default: %v\n%s", err, out)
	}
	deploy := &appsv1.Deployment{}
	if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: installNamespace, Name: operatorName}, deploy); err != nil {
		t.Fatalf("after kubectl apply: %v\n%s", err, out)
	}
}

// moduleRoot is the repository root.
func moduleRoot(t *testing.T) string {
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

// build runs kustomize build on config/<dir>.
func build(t *testing.T, dir string) []*unstructured.Unstructured {
	t.Helper()
	path := filepath.Join(moduleRoot(t), "config", dir)
	resources, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), path)
	if err != nil {
		t.Fatalf("kustomize build %s: %v", path, err)
	}
	var objs []*unstructured.Unstructured
	for _, r := range resources.Resources() {
		// Through JSON, so that numbers are the int64 and float64 of
		// unstructured objects.
		data, err := r.MarshalJSON()
		if err != nil {
			t.Fatalf("kustomize build %s: %s: %v", path, r.CurId(), err)
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(data); err != nil {
			t.Fatalf("kustomize build %s: %s: %v", path, r.CurId(), err)
		}
		objs = append(objs, u)
	}
	return objs
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

// generatedRole reads config/rbac/role.yaml, which `make generate` writes
// from the controllers' +kubebuilder:rbac markers (and `make
// verify-generated` keeps in step with them).
func generatedRole(t *testing.T) *rbacv1.ClusterRole {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(moduleRoot(t), "config", "rbac", "role.yaml"))
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

func find(t *testing.T, objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	t.Fatalf("config/default has no %s %s", kind, name)
	return nil
}

func convert[T any](t *testing.T, u *unstructured.Unstructured) *T {
	t.Helper()
	out := new(T)
	if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(u.Object, out, true); err != nil {
		t.Fatalf("%s %s: %v", u.GetKind(), u.GetName(), err)
	}
	return out
}

// checkDeployment parses the operator container's flags and environment
// with the operator's own parser and checks that the ports and probes
// match the addresses they set. It returns the resolved settings.
func checkDeployment(t *testing.T, d *appsv1.Deployment) operator.Settings {
	t.Helper()
	spec := d.Spec.Template.Spec
	if spec.ServiceAccountName != operatorName {
		t.Errorf("serviceAccountName = %q, want %q", spec.ServiceAccountName, operatorName)
	}
	if len(spec.Containers) != 1 {
		t.Fatalf("Deployment has %d containers, want 1", len(spec.Containers))
	}
	c := spec.Containers[0]
	if diff := cmp.Diff([]string{binaryPath}, c.Command); diff != "" {
		t.Errorf("command (-want +got):\n%s", diff)
	}

	fs := flag.NewFlagSet(binaryPath, flag.ContinueOnError)
	flags := operator.BindFlags(fs)
	if err := fs.Parse(c.Args); err != nil {
		t.Fatalf("the operator rejects the Deployment's args %q: %v", c.Args, err)
	}
	if fs.NArg() != 0 {
		t.Errorf("args %q leave positional arguments %q, which the operator ignores", c.Args, fs.Args())
	}
	env := map[string]string{}
	for _, e := range c.Env {
		env[e.Name] = e.Value
		if e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.namespace" {
			env[e.Name] = d.Namespace
		}
	}
	settings, err := flags.Resolve(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil {
		t.Fatalf("resolving the Deployment's flags: %v", err)
	}
	cfg := settings.Config
	if !cfg.LeaderElectionEnabled() {
		t.Error("leader election is off; the Deployment must run with --enable-leader-election")
	}

	ports := map[string]int32{}
	for _, p := range c.Ports {
		ports[p.Name] = p.ContainerPort
	}
	if got, want := ports["http"], addrPort(t, cfg.MetricsAddr); got != want {
		t.Errorf("metrics containerPort http = %d, want %d (--metrics-addr=%s)", got, want, cfg.MetricsAddr)
	}
	probePort := addrPort(t, cfg.ProbeAddr)
	for name, probe := range map[string]*corev1.Probe{"/healthz": c.LivenessProbe, "/readyz": c.ReadinessProbe} {
		if probe == nil || probe.HTTPGet == nil {
			t.Errorf("probe %s is missing or not an HTTP GET", name)
			continue
		}
		if probe.HTTPGet.Path != name {
			t.Errorf("probe path = %q, want %q", probe.HTTPGet.Path, name)
		}
		port := probe.HTTPGet.Port.IntVal
		if probe.HTTPGet.Port.StrVal != "" {
			port = ports[probe.HTTPGet.Port.StrVal]
		}
		if port != probePort {
			t.Errorf("probe %s port = %d, want %d (--health-probe-bind-address=%s)", name, port, probePort, cfg.ProbeAddr)
		}
	}
	sc := c.SecurityContext
	if sc == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
		t.Error("the container must set allowPrivilegeEscalation: false")
	}
	if psc := spec.SecurityContext; psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot {
		t.Error("the Pod must set runAsNonRoot: true")
	}
	if c.Resources.Requests.Memory().IsZero() || c.Resources.Limits.Memory().IsZero() {
		t.Error("the container must request and limit memory")
	}
	return settings
}

func addrPort(t *testing.T, addr string) int32 {
	t.Helper()
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatalf("address %q: %v", addr, err)
	}
	n, err := strconv.ParseInt(port, 10, 32)
	if err != nil {
		t.Fatalf("address %q: %v", addr, err)
	}
	return int32(n)
}

// apply server-side applies every object, in kustomize's order (Namespace
// and CRDs first), as `kubectl apply --server-side -k` does, then waits
// for the CRDs to be established.
func apply(t *testing.T, env *testenv.Env, objs []*unstructured.Unstructured) {
	t.Helper()
	ctx := t.Context()
	for _, o := range objs {
		err := env.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(o.DeepCopy()), client.FieldOwner("kubectl"), client.ForceOwnership)
		if err != nil {
			t.Fatalf("applying %s %s: %v", o.GetKind(), o.GetName(), err)
		}
	}
	for _, o := range objs {
		if o.GetKind() != "CustomResourceDefinition" {
			continue
		}
		poll(t, "CRD "+o.GetName()+" established", func(ctx context.Context) (bool, error) {
			crd := &apiextensionsv1.CustomResourceDefinition{}
			if err := env.Client.Get(ctx, client.ObjectKey{Name: o.GetName()}, crd); err != nil {
				return false, err
			}
			for _, c := range crd.Status.Conditions {
				if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
					return true, nil
				}
			}
			return false, nil
		})
	}
}

// checkAccess asks the API server, for each verb on each resource of rules,
// whether the operator's service account may do it in any namespace, and
// checks the leader-election Role in ray-system.
func checkAccess(t *testing.T, c client.Client, rules []rbacv1.PolicyRule) {
	t.Helper()
	type access struct{ group, resource, verb, namespace string }
	var want []access
	for _, r := range rules {
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				for _, v := range r.Verbs {
					want = append(want, access{g, res, v, "some-user-namespace"})
				}
			}
		}
	}
	for _, v := range []string{"get", "create", "update"} {
		want = append(want, access{"coordination.k8s.io", "leases", v, installNamespace})
	}
	want = append(want, access{"", "events", "create", installNamespace})
	if len(want) < 50 {
		t.Fatalf("only %d accesses to check; the generated role looks truncated", len(want))
	}
	for _, a := range want {
		if !allowed(t, c, a.group, a.resource, a.verb, a.namespace) {
			t.Errorf("%s may not %s %s (group %q) in %s", operatorUser, a.verb, a.resource, a.group, a.namespace)
		}
	}
	// The API server really authorizes: what no rule grants is denied.
	if allowed(t, c, "", "nodes", "delete", "") {
		t.Errorf("%s may delete nodes; the check is not exercising RBAC", operatorUser)
	}
}

func allowed(t *testing.T, c client.Client, group, resource, verb, namespace string) bool {
	t.Helper()
	res, sub, _ := strings.Cut(resource, "/")
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User:   operatorUser,
		Groups: operatorGroups,
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Group: group, Resource: res, Subresource: sub, Verb: verb, Namespace: namespace,
		},
	}}
	if err := c.Create(t.Context(), sar); err != nil {
		t.Fatalf("SubjectAccessReview: %v", err)
	}
	return sar.Status.Allowed
}

// runOperator starts the operator's manager as the service account, with
// the Deployment's settings, and checks that it takes the leader Lease in
// ray-system and reconciles the autoscaler sample (head Pod and Service,
// the autoscaler's ServiceAccount, Role and RoleBinding) without a single
// "forbidden" from the API server.
func runOperator(t *testing.T, env *testenv.Env, settings operator.Settings) {
	// operator.New registers controller names, which controller-runtime
	// allows once per process: with -count > 1 only the first run can go.
	if !operatorRuns.CompareAndSwap(false, true) {
		t.Skip("operator.New already ran in this process")
	}
	logs := &syncBuffer{}
	ctrl.SetLogger(zap.New(zap.WriteTo(logs), zap.UseDevMode(true)))

	// In a Pod the Lease namespace comes from the service account's mount.
	settings.Config.LeaderElectionNamespace = installNamespace
	// Out of a Pod, free ports instead of the fixed ones.
	settings.Config.MetricsAddr = "0"
	settings.Config.ProbeAddr = "127.0.0.1:0"

	cfg := rest.CopyConfig(env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: operatorUser, Groups: operatorGroups}
	mgr, err := operator.New(settings, cfg)
	if err != nil {
		t.Fatalf("operator.New as %s: %v", operatorUser, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})

	poll(t, "leader Lease held in "+installNamespace, func(ctx context.Context) (bool, error) {
		lease := &coordinationv1.Lease{}
		err := env.Client.Get(ctx, client.ObjectKey{Namespace: installNamespace, Name: operator.LeaderElectionID}, lease)
		if apierrors.IsNotFound(err) {
			return false, managerFailed(done)
		}
		return err == nil && lease.Spec.HolderIdentity != nil && *lease.Spec.HolderIdentity != "", err
	})

	ns := env.Namespace(t)
	cluster := sample(t, "ray-cluster.autoscaler.yaml")
	cluster.Namespace = ns
	if a := cluster.Spec.EnableInTreeAutoscaling; a == nil || !*a {
		t.Fatal("the autoscaler sample no longer enables in-tree autoscaling")
	}
	if err := env.Client.Create(t.Context(), cluster); err != nil {
		t.Fatal(err)
	}
	children := []client.Object{&corev1.ServiceAccount{}, &rbacv1.Role{}, &rbacv1.RoleBinding{}}
	poll(t, "head Pod, head Service and autoscaler RBAC", func(ctx context.Context) (bool, error) {
		if err := managerFailed(done); err != nil {
			return false, err
		}
		if denied := forbidden(logs.String()); denied != "" {
			return false, fmt.Errorf("the API server denied the operator:\n%s", denied)
		}
		pods := &corev1.PodList{}
		if err := env.Client.List(ctx, pods, client.InNamespace(ns), client.MatchingLabels{rayv1.LabelNodeType: string(rayv1.HeadNode)}); err != nil || len(pods.Items) == 0 {
			return false, err
		}
		svcs := &corev1.ServiceList{}
		if err := env.Client.List(ctx, svcs, client.InNamespace(ns)); err != nil || len(svcs.Items) == 0 {
			return false, err
		}
		for _, obj := range children {
			err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: cluster.Name}, obj)
			if apierrors.IsNotFound(err) {
				return false, nil
			}
			if err != nil {
				return false, err
			}
		}
		return true, nil
	})
	if denied := forbidden(logs.String()); denied != "" {
		t.Errorf("the API server denied the operator:\n%s", denied)
	}
}

// forbidden returns the log lines that report a request the API server
// refused.
func forbidden(log string) string {
	var lines []string
	for line := range strings.Lines(log) {
		if strings.Contains(strings.ToLower(line), "forbidden") {
			lines = append(lines, line)
		}
	}
	return strings.Join(lines, "")
}

// managerFailed returns the manager's error when it stopped early.
func managerFailed(done chan error) error {
	select {
	case err := <-done:
		done <- err
		if err == nil {
			return errors.New("manager stopped early without an error")
		}
		return fmt.Errorf("manager stopped early: %w", err)
	default:
		return nil
	}
}

func sample(t *testing.T, name string) *rayv1.RayCluster {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(moduleRoot(t), "config", "samples", name))
	if err != nil {
		t.Fatal(err)
	}
	cluster := &rayv1.RayCluster{}
	if err := yaml.Unmarshal(data, cluster); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return cluster
}

func poll(t *testing.T, what string, cond wait.ConditionWithContextFunc) {
	t.Helper()
	if err := wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, waitTimeout, true, cond); err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

// syncBuffer is a bytes.Buffer safe for the manager's goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
