// Package webhooks_test runs the operator's validating webhooks behind a
// real kube-apiserver: objects go through the API server's admission path,
// which calls the webhook server over HTTPS with the CA bundle the operator
// put into the ValidatingWebhookConfiguration itself (no cert-manager). The
// operator runs as the ServiceAccount of config/default-with-webhooks, with
// only the permissions that install grants.
package webhooks_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configv1alpha1 "github.com/ray-operator/ray-operator/api/config/v1alpha1"
	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/controlplane"
	"github.com/ray-operator/ray-operator/internal/features"
	"github.com/ray-operator/ray-operator/internal/operator"
	"github.com/ray-operator/ray-operator/internal/testing/installcheck"
	"github.com/ray-operator/ray-operator/internal/testing/testenv"
	"github.com/ray-operator/ray-operator/internal/webhooks"
)

const (
	// configurationName is the configuration config/webhook installs and
	// its ClusterRole lets the operator write.
	configurationName = webhooks.DefaultConfigurationName
	certNamespace     = "ray-system"
	waitTimeout       = 60 * time.Second
)

// operatorID is the ServiceAccount config/default-with-webhooks runs the
// operator as; the test's operator runs as it, with that install's RBAC.
var operatorID = installcheck.Identity{Namespace: certNamespace, ServiceAccount: "kuberay-operator"}

// world is an API server with the webhook configuration installed and an
// operator that serves only webhooks (no controllers).
type world struct {
	t         *testing.T
	env       *testenv.Env
	c         client.Client
	ns        string
	probeAddr string
	root      string
}

func TestWebhooks(t *testing.T) {
	w := start(t)
	t.Run("the operator injected its CA and reports ready", w.readyWithCABundle)
	t.Run("invalid objects are rejected with field paths and messages", w.rejectsInvalidObjects)
	t.Run("every sample is accepted", w.acceptsEverySample)
	t.Run("updates are validated too", w.validatesUpdates)
	t.Run("a damaged certificate is replaced and admission goes on", w.rotatesCertificate)
}

func start(t *testing.T) *world {
	env := testenv.Start(t)
	root, err := controlplane.ModuleRoot(must(os.Getwd()))
	if err != nil {
		t.Fatal(err)
	}
	w := &world{t: t, env: env, c: env.Client, ns: env.Namespace(t), probeAddr: testenv.FreeAddr(t), root: root}
	port := testenv.FreePorts(t, 1)[0]
	cfg, err := webhooks.LocalConfiguration(filepath.Join(root, webhooks.ManifestPath), configurationName, "https://localhost:"+strconv.Itoa(port))
	if err != nil {
		t.Fatal(err)
	}
	w.create(cfg)
	w.create(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: certNamespace}})
	installRBAC(t, env)
	w.runOperator(webhooks.Options{
		Enabled: true, Port: port, CertDir: t.TempDir(), CertManagement: webhooks.CertsInternal,
		Namespace: certNamespace, SecretName: webhooks.DefaultSecretName, ServiceName: webhooks.DefaultServiceName,
		ExtraDNSNames: []string{"localhost"}, ConfigurationName: configurationName, WriteCertFiles: true,
	})
	return w
}

// installRBAC installs the ServiceAccount, roles and bindings of
// config/default-with-webhooks: the generated ClusterRole and the webhook
// Role and ClusterRole, which let the operator write its own configuration
// only.
func installRBAC(t *testing.T, env *testenv.Env) {
	t.Helper()
	var rbac []*unstructured.Unstructured
	for _, obj := range installcheck.Kustomize(t, "default-with-webhooks") {
		switch obj.GetKind() {
		case "ServiceAccount", "Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding":
			rbac = append(rbac, obj)
		}
	}
	installcheck.Apply(t, env, rbac)
}

// runOperator starts operator.New with webhooks only, as the binary would
// with ENABLE_WEBHOOKS=true, as operatorID.
func (w *world) runOperator(hooks webhooks.Options) {
	cfg := configv1alpha1.Configuration{MetricsAddr: "0", ProbeAddr: w.probeAddr, EnableLeaderElection: ptr.To(false)}
	configv1alpha1.SetDefaults(&cfg)
	// The samples of alpha features are accepted with their gates on.
	gate := features.NewGate()
	if err := gate.Set("GCSFaultToleranceEmbeddedStorage=true,RayClusterHistoryServer=true,RayClusterMTLS=true,RayClusterNetworkPolicy=true"); err != nil {
		w.t.Fatal(err)
	}
	mgr, err := operator.New(operator.Settings{
		Config: cfg, Knobs: configv1alpha1.DefaultKnobs(), Features: gate,
		Webhooks: hooks, Controllers: []operator.Controller{},
	}, impersonating(w.env.Config, operatorID))
	if err != nil {
		w.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	w.t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			w.t.Errorf("manager: %v", err)
		}
	})
}

func (w *world) readyWithCABundle(t *testing.T) {
	w.eventually(t, "/readyz to answer 200", func() (bool, error) {
		return httpStatus("http://"+w.probeAddr+"/readyz") == http.StatusOK, nil
	})
	bundle := w.caBundles(t)
	if len(bundle) == 0 {
		t.Fatal("no CA bundle in the configuration")
	}
	secret := w.certSecret(t)
	if !bytes.Equal(bundle, secret.Data["ca.crt"]) {
		t.Error("the configuration's CA bundle is not the CA of the certificate Secret")
	}
}

// rejection is an invalid object and what the rejection must say.
type rejection struct {
	obj  client.Object
	want []string
}

func (w *world) rejectsInvalidObjects(t *testing.T) {
	long := func(n int) string { return "r" + strings.Repeat("a", n-1) }
	cases := map[string]rejection{
		"RayCluster name over 53 characters": {
			w.rayCluster(long(54), "a"), []string{`RayCluster.ray.io "` + long(54) + `" is invalid`, "metadata.name", "RayCluster name should be no more than 53 characters"}},
		"RayCluster name not DNS-1035": {
			w.rayCluster("1cluster", "a"), []string{"metadata.name", "RayCluster name should be a valid DNS1035 label"}},
		"RayCluster worker group names repeated": {
			w.rayCluster("dup", "a", "b", "a"), []string{"spec.workerGroupSpecs[2].groupName", "worker group names must be unique"}},
		"RayCluster networkPolicy rules that would never apply": {
			w.withNetworkPolicy(w.rayCluster("np", "a")), []string{"spec:", `networkPolicy.head.ingressRules cannot be set when mode is "DenyAllEgress" (ingress is not restricted)`}},
		"RayCluster mTLS certificates from an unknown source": {
			w.withTLS(w.rayCluster("tls", "a"), "vault"), []string{"spec:", `annotation ray.io/mtls-certificates must be "cert-manager" or "operator", got "vault"`}},
		"RayCluster rolling update with both limits 0": {
			w.withRollingUpdate(w.rayCluster("roll", "a"), 0), []string{"spec.upgradeStrategy", "maxUnavailable and maxSurge may not both be 0"}},
		"RayJob cluster with a rolling update": {
			w.withRollingUpdate(w.rayJob("roll-job"), 1), []string{"spec.rayClusterSpec.upgradeStrategy", "upgradeStrategy RollingUpdate is only for standalone RayClusters"}},
		"RayService cluster with a rolling update": {
			w.withRollingUpdate(w.rayService("roll-svc", ""), 1), []string{"spec.rayClusterConfig.upgradeStrategy", "upgradeStrategy RollingUpdate is only for standalone RayClusters"}},
		"RayJob name over 47 characters": {
			w.rayJob(long(48)), []string{`RayJob.ray.io "` + long(48) + `" is invalid`, "metadata.name", "RayJob name should be no more than 47 characters"}},
		"RayService name over 47 characters": {
			w.rayService(long(48), ""), []string{"metadata.name", "RayService name should be no more than 47 characters"}},
		"RayService initializing timeout not a duration": {
			w.rayService("svc", "soon"), []string{"metadata.annotations[ray.io/initializing-timeout]", "has invalid format"}},
		"RayJob cluster with idleTerminationOptions": {
			w.withIdleTermination(w.rayJob("idle-job")), []string{"spec.rayClusterSpec.idleTerminationOptions", "rayClusterSpec.idleTerminationOptions is only for standalone RayClusters"}},
		"RayService cluster with idleTerminationOptions": {
			w.withIdleTermination(w.rayService("idle-svc", "")), []string{"rayClusterSpec.idleTerminationOptions is only for standalone RayClusters"}},
		"RayCronJob schedule not a cron expression": {
			w.rayCronJob("cron", "every day", true), []string{`RayCronJob.ray.io "cron" is invalid`, "spec:", `spec.schedule "every day" is not a valid cron schedule`}},
		"RayCronJob jobTemplate invalid": {
			w.rayCronJob("cron", "@hourly", false), []string{"spec:", "spec.jobTemplate:", "one of RayClusterSpec or ClusterSelector must be set"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := w.c.Create(t.Context(), tc.obj, client.DryRunAll)
			wantInvalid(t, err, tc.want...)
		})
	}
}

// withNetworkPolicy denies egress only but gives the head ingress rules.
func (w *world) withNetworkPolicy(rc *rayv1.RayCluster) *rayv1.RayCluster {
	rc.Spec.NetworkPolicy = &rayv1.NetworkPolicyConfig{
		Mode: ptr.To(rayv1.NetworkPolicyDenyAllEgress),
		Head: &rayv1.NetworkPolicyRules{IngressRules: []networkingv1.NetworkPolicyIngressRule{{}}},
	}
	return rc
}

// withRollingUpdate sets upgradeStrategy RollingUpdate with maxSurge surge
// and maxUnavailable 0 on a RayCluster, or in a RayJob's or RayService's
// cluster spec.
func (w *world) withRollingUpdate(obj client.Object, surge int32) client.Object {
	strategy := &rayv1.RayClusterUpgradeStrategy{
		Type: ptr.To(rayv1.RayClusterRollingUpdate),
		RollingUpdate: &rayv1.RayClusterRollingUpdateOptions{
			MaxSurge: ptr.To(intstr.FromInt32(surge)), MaxUnavailable: ptr.To(intstr.FromInt32(0)),
		},
	}
	switch o := obj.(type) {
	case *rayv1.RayCluster:
		o.Spec.UpgradeStrategy = strategy
	case *rayv1.RayJob:
		o.Spec.RayClusterSpec.UpgradeStrategy = strategy
	case *rayv1.RayService:
		o.Spec.RayClusterSpec.UpgradeStrategy = strategy
	}
	return obj
}

// withIdleTermination sets idleTerminationOptions in the cluster spec of a
// RayJob or a RayService, where it is refused.
func (w *world) withIdleTermination(obj client.Object) client.Object {
	opts := &rayv1.IdleTerminationOptions{Policy: rayv1.IdleTerminationDelete, TimeoutSeconds: 60}
	switch o := obj.(type) {
	case *rayv1.RayJob:
		o.Spec.RayClusterSpec.IdleTerminationOptions = opts
	case *rayv1.RayService:
		o.Spec.RayClusterSpec.IdleTerminationOptions = opts
	}
	return obj
}

// withTLS turns mutual TLS on with certificates from source.
func (w *world) withTLS(rc *rayv1.RayCluster, source string) *rayv1.RayCluster {
	rc.Spec.TLSOptions = &rayv1.TLSOptions{Enabled: ptr.To(true)}
	rc.Annotations = map[string]string{"ray.io/mtls-certificates": source}
	return rc
}

func (w *world) acceptsEverySample(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(w.root, "config", "samples", "*.yaml"))
	if err != nil || len(files) < 17 {
		t.Fatalf("found %d samples (%v), want at least 17", len(files), err)
	}
	kinds := map[string]int{}
	for _, file := range files {
		objs, err := testenv.DecodeObjects(must(os.ReadFile(file)))
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		for _, obj := range objs {
			obj.SetNamespace(w.ns)
			if err := w.c.Create(t.Context(), obj, client.DryRunAll); err != nil {
				t.Errorf("%s: %s %s rejected: %v", filepath.Base(file), obj.GetKind(), obj.GetName(), err)
			}
			kinds[obj.GetKind()]++
		}
	}
	for _, kind := range []string{rayv1.KindRayCluster, rayv1.KindRayJob, rayv1.KindRayService, rayv1.KindRayCronJob} {
		if kinds[kind] == 0 {
			t.Errorf("no sample is a %s, so its webhook's acceptance is untested", kind)
		}
	}
}

func (w *world) validatesUpdates(t *testing.T) {
	rc := w.rayCluster("updated", "a", "b")
	rc.Spec.ManagedBy = ptr.To("ray.io/kuberay-operator")
	w.create(rc)

	dup := rc.DeepCopy()
	dup.Spec.WorkerGroupSpecs[1].GroupName = "a"
	wantInvalid(t, w.c.Update(t.Context(), dup), "spec.workerGroupSpecs[1].groupName", "worker group names must be unique")

	managed := rc.DeepCopy()
	managed.Spec.ManagedBy = ptr.To("kueue.x-k8s.io/multikueue")
	wantInvalid(t, w.c.Update(t.Context(), managed), "spec.managedBy", "the managedBy field is immutable")

	renamed := rc.DeepCopy()
	renamed.Spec.WorkerGroupSpecs[1].GroupName = "c"
	if err := w.c.Update(t.Context(), renamed); err != nil {
		t.Errorf("a valid update was rejected: %v", err)
	}
}

// rotatesCertificate empties the certificate Secret, as a lost or expired
// certificate would leave it: the operator makes a new CA and serving
// certificate, puts the new CA into the configuration and serves with the
// new certificate, so admission works again end to end.
func (w *world) rotatesCertificate(t *testing.T) {
	old := w.certSecret(t)
	emptied := old.DeepCopy()
	emptied.Data = nil
	if err := w.c.Update(t.Context(), emptied); err != nil {
		t.Fatal(err)
	}
	var fresh *corev1.Secret
	w.eventually(t, "a new certificate in the Secret", func() (bool, error) {
		fresh = w.certSecret(t)
		return len(fresh.Data["ca.crt"]) > 0 && !bytes.Equal(fresh.Data["ca.crt"], old.Data["ca.crt"]), nil
	})
	w.eventually(t, "the new CA in every webhook of the configuration", func() (bool, error) {
		return bytes.Equal(w.caBundles(t), fresh.Data["ca.crt"]), nil
	})
	w.eventually(t, "admission through the new certificate", func() (bool, error) {
		if err := w.c.Create(t.Context(), w.rayCluster("after-rotation", "a"), client.DryRunAll); err != nil {
			return false, nil //nolint:nilerr // x509 errors until the server reloads its files
		}
		err := w.c.Create(t.Context(), w.rayCluster("after-rotation", "a", "a"), client.DryRunAll)
		return apierrors.IsInvalid(err) && strings.Contains(err.Error(), "worker group names must be unique"), nil
	})
}

// caBundles returns the CA bundle shared by every webhook of the
// configuration (nil when they differ or are empty).
func (w *world) caBundles(t *testing.T) []byte {
	t.Helper()
	cfg := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	if err := w.c.Get(t.Context(), client.ObjectKey{Name: configurationName}, cfg); err != nil {
		t.Fatal(err)
	}
	if len(cfg.Webhooks) != 4 {
		t.Fatalf("configuration has %d webhooks, want 4", len(cfg.Webhooks))
	}
	first := cfg.Webhooks[0].ClientConfig.CABundle
	for _, wh := range cfg.Webhooks[1:] {
		if !bytes.Equal(wh.ClientConfig.CABundle, first) {
			return nil
		}
	}
	return first
}

func (w *world) certSecret(t *testing.T) *corev1.Secret {
	t.Helper()
	s := &corev1.Secret{}
	key := client.ObjectKey{Namespace: certNamespace, Name: webhooks.DefaultSecretName}
	if err := w.c.Get(t.Context(), key, s); err != nil {
		t.Fatalf("certificate Secret: %v", err)
	}
	return s
}

func (w *world) create(obj client.Object) {
	w.t.Helper()
	if err := w.c.Create(w.t.Context(), obj); err != nil {
		w.t.Fatalf("creating %T %s: %v", obj, obj.GetName(), err)
	}
}

// eventually polls cond until it holds or waitTimeout passes.
func (w *world) eventually(t *testing.T, what string, cond func() (bool, error)) {
	t.Helper()
	var lastErr error
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, waitTimeout, true, func(context.Context) (bool, error) {
		ok, err := cond()
		lastErr = err
		return ok && err == nil, nil
	})
	if err != nil {
		t.Fatalf("timed out waiting for %s (last error: %v)", what, lastErr)
	}
}

func wantInvalid(t *testing.T, err error, want ...string) {
	t.Helper()
	if !apierrors.IsInvalid(err) {
		t.Fatalf("got %v, want an Invalid error mentioning %q", err, want)
	}
	for _, s := range want {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error does not mention %q:\n%v", s, err)
		}
	}
}

func httpStatus(url string) int {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0
	}
	_ = resp.Body.Close()
	return resp.StatusCode
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(fmt.Sprintf("unexpected error: %v", err))
	}
	return v
}

// impersonating is cfg acting as id.
func impersonating(cfg *rest.Config, id installcheck.Identity) *rest.Config {
	as := rest.CopyConfig(cfg)
	as.Impersonate = rest.ImpersonationConfig{UserName: id.User(), Groups: id.Groups()}
	return as
}
