package raycluster_test

import (
	"context"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	certmanagerv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	cmmeta "github.com/cert-manager/cert-manager/pkg/apis/meta/v1"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stypes "k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/yaml"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/controller/raycluster"
	"github.com/ray-operator/ray-operator/internal/features"
	"github.com/ray-operator/ray-operator/internal/managerdeps"
	"github.com/ray-operator/ray-operator/internal/operator"
	"github.com/ray-operator/ray-operator/internal/testing/installcheck"
	"github.com/ray-operator/ray-operator/internal/testing/testenv"
)

// kubeRayMTLS is testdata/kuberay-mtls.yaml: what KubeRay makes for the
// mTLS sample.
type kubeRayMTLS struct {
	Pods         map[string]corev1.Pod       `json:"pods"`
	Issuers      []certmanagerv1.Issuer      `json:"issuers"`
	Certificates []certmanagerv1.Certificate `json:"certificates"`
	Secrets      []corev1.Secret             `json:"secrets"`
}

// The UID and Pod IPs KubeRay's objects were printed with.
const (
	kubeRayUID      = "0123456789abcdef"
	kubeRayHeadIP   = "10.0.0.5"
	kubeRayWorkerIP = "10.0.0.7"
)

// readKubeRayMTLS reads KubeRay's objects and moves them to the namespace
// and cluster UID of rc.
func readKubeRayMTLS(t *testing.T, rc *rayv1.RayCluster) kubeRayMTLS {
	t.Helper()
	data, err := os.ReadFile("testdata/kuberay-mtls.yaml")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.ReplaceAll(string(data), ".default.svc.", "."+rc.Namespace+".svc.")
	text = strings.ReplaceAll(text, "namespace: default", "namespace: "+rc.Namespace)
	text = strings.ReplaceAll(text, "ca-secret-"+kubeRayUID[:8], "ca-secret-"+string(rc.UID)[:8])
	text = strings.ReplaceAll(text, "uid: "+kubeRayUID, "uid: "+string(rc.UID))
	var k kubeRayMTLS
	if err := yaml.UnmarshalStrict([]byte(text), &k); err != nil {
		t.Fatal(err)
	}
	return k
}

// tlsParts are the parts of a Ray Pod mTLS decides: the init containers in
// order (whole for the IP SAN wait, the TLS variables and mounts for the
// others), the Ray container's TLS variables and mounts, and the volumes.
type tlsParts struct {
	InitContainers []corev1.Container
	RayTLSEnv      []corev1.EnvVar
	RayMounts      []corev1.VolumeMount
	Volumes        []corev1.Volume
}

func isTLSEnv(e corev1.EnvVar) bool {
	return e.Name == "RAY_USE_TLS" || strings.HasPrefix(e.Name, "RAY_TLS_")
}

func tlsPartsOf(pod corev1.Pod) tlsParts {
	var p tlsParts
	for _, c := range pod.Spec.InitContainers {
		if c.Name != "wait-for-tls-ip-san" {
			c = corev1.Container{Name: c.Name, Env: slices.DeleteFunc(slices.Clone(c.Env), func(e corev1.EnvVar) bool { return !isTLSEnv(e) }), VolumeMounts: c.VolumeMounts}
		}
		// defaulted by the API server
		c.TerminationMessagePath, c.TerminationMessagePolicy, c.ImagePullPolicy = "", "", ""
		for i := range c.Env {
			if ref := c.Env[i].ValueFrom; ref != nil && ref.FieldRef != nil {
				ref.FieldRef.APIVersion = ""
			}
		}
		p.InitContainers = append(p.InitContainers, c)
	}
	ray := pod.Spec.Containers[0]
	p.RayTLSEnv = slices.DeleteFunc(slices.Clone(ray.Env), func(e corev1.EnvVar) bool { return !isTLSEnv(e) })
	p.RayMounts = ray.VolumeMounts
	for _, v := range pod.Spec.Volumes {
		if v.Secret != nil {
			v.Secret.DefaultMode = nil // defaulted by the API server
		}
		p.Volumes = append(p.Volumes, v)
	}
	return p
}

// mtlsObject is what is compared of a cert-manager object or Secret.
type mtlsObject struct {
	Name   string
	Labels map[string]string
	Owners []metav1.OwnerReference
	Spec   any
}

func issuerView(o certmanagerv1.Issuer) mtlsObject {
	return mtlsObject{o.Name, o.Labels, o.OwnerReferences, o.Spec}
}

func certificateView(o certmanagerv1.Certificate) mtlsObject {
	return mtlsObject{o.Name, o.Labels, o.OwnerReferences, o.Spec}
}

// mtlsObjects lists the namespace's Issuers and Certificates by name.
func (w *world) mtlsObjects() (issuers []certmanagerv1.Issuer, certs []certmanagerv1.Certificate) {
	var il certmanagerv1.IssuerList
	var cl certmanagerv1.CertificateList
	w.List(&il)
	w.List(&cl)
	byName := func(a, b client.Object) int { return strings.Compare(a.GetName(), b.GetName()) }
	slices.SortFunc(il.Items, func(a, b certmanagerv1.Issuer) int { return byName(&a, &b) })
	slices.SortFunc(cl.Items, func(a, b certmanagerv1.Certificate) int { return byName(&a, &b) })
	return il.Items, cl.Items
}

// issue does what cert-manager would once it has issued a Certificate:
// it writes the Secret with the certificate, key and CA (and its
// annotation naming the Certificate), and marks the Certificate Ready at
// its generation.
func (w *world) issue(cert *certmanagerv1.Certificate) {
	w.T.Helper()
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: cert.Spec.SecretName, Annotations: map[string]string{"cert-manager.io/certificate-name": cert.Name}},
		Type:       corev1.SecretTypeTLS,
		Data:       map[string][]byte{"tls.crt": []byte("crt"), "tls.key": []byte("key"), "ca.crt": []byte("ca")},
	}
	if !w.Get(secret.Name, &corev1.Secret{}) {
		w.Create(secret)
	}
	w.UpdateStatus(cert, func() {
		cert.Status.Conditions = []certmanagerv1.CertificateCondition{{
			Type: certmanagerv1.CertificateConditionReady, Status: cmmeta.ConditionTrue,
			Reason: "Ready", ObservedGeneration: cert.Generation,
		}}
	})
}

func (w *world) setPodIP(pod *corev1.Pod, ip string) {
	w.T.Helper()
	err := testenv.UpdatePodStatus(context.Background(), w.Client, pod, func(p *corev1.Pod) {
		p.Status.Phase, p.Status.PodIP = corev1.PodRunning, ip
		p.Status.PodIPs = []corev1.PodIP{{IP: ip}}
	})
	if err != nil {
		w.T.Fatal(err)
	}
}

func resourceVersion(t *testing.T, o client.Object) int {
	t.Helper()
	v, err := strconv.Atoi(o.GetResourceVersion())
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestMTLSMatchesKubeRay creates the mTLS sample with the gate on, plays
// cert-manager and the kubelet, and compares what the operator makes with
// what KubeRay's makes for the same RayCluster (testdata/kuberay-mtls.yaml):
// the Issuers and Certificates (names, labels, owner references, specs with
// the Pods' IPs as SANs, created in KubeRay's order), no Pod before both
// leaf Secrets are issued, the Pods' TLS volume, variables, mounts and
// wait-for-tls-ip-san init container, and the Secrets owned by their
// Certificates. Turning tlsOptions off then deletes the Issuers and
// Certificates.
func TestMTLSMatchesKubeRay(t *testing.T) {
	w := newWorld(t, withGates(t, features.RayClusterMTLS))
	rc := installcheck.Sample(t, "ray-cluster.mtls.yaml")
	w.Create(rc)
	want := readKubeRayMTLS(t, rc)

	var issuers []certmanagerv1.Issuer
	var certs []certmanagerv1.Certificate
	w.Eventually("2 Issuers and 3 Certificates", func() (bool, error) {
		issuers, certs = w.mtlsObjects()
		return len(issuers) == 2 && len(certs) == 3, nil
	})
	// KubeRay's order: self-signed Issuer, CA Certificate, CA Issuer, head
	// then worker Certificate (by name: ca-issuer, selfsigned; ca, head, worker).
	order := []client.Object{&issuers[1], &certs[0], &issuers[0], &certs[1], &certs[2]}
	for i := 1; i < len(order); i++ {
		if resourceVersion(t, order[i-1]) >= resourceVersion(t, order[i]) {
			t.Errorf("%s created after %s", order[i-1].GetName(), order[i].GetName())
		}
	}
	if pods := w.Pods(rc.Name, nil); len(pods) != 0 {
		t.Errorf("%d Pods created before the certificates were issued", len(pods))
	}
	w.issue(&certs[1])
	if pods := w.Pods(rc.Name, nil); len(pods) != 0 {
		t.Errorf("%d Pods created with only the head certificate issued", len(pods))
	}
	w.issue(&certs[2])

	head := w.WaitPods(rc.Name, headLabels(), 1)[0]
	worker := w.WaitPods(rc.Name, groupLabels("small-group"), 1)[0]
	for role, got := range map[string]corev1.Pod{"head": head, "worker": worker} {
		if diff := cmp.Diff(tlsPartsOf(want.Pods[role]), tlsPartsOf(got)); diff != "" {
			t.Errorf("%s Pod: mTLS parts differ from KubeRay's (-KubeRay +ours):\n%s", role, diff)
		}
	}

	w.setPodIP(&head, kubeRayHeadIP)
	w.setPodIP(&worker, kubeRayWorkerIP)
	w.issue(&certs[0])
	w.Eventually("Pod IPs in the leaf certificates", func() (bool, error) {
		issuers, certs = w.mtlsObjects()
		return slices.Contains(certs[1].Spec.IPAddresses, kubeRayHeadIP) && slices.Contains(certs[2].Spec.IPAddresses, kubeRayWorkerIP), nil
	})
	for i := range want.Issuers {
		if diff := cmp.Diff(issuerView(want.Issuers[i]), issuerView(issuers[i])); diff != "" {
			t.Errorf("Issuer differs from KubeRay's (-KubeRay +ours):\n%s", diff)
		}
	}
	for i := range want.Certificates {
		if diff := cmp.Diff(certificateView(want.Certificates[i]), certificateView(certs[i])); diff != "" {
			t.Errorf("Certificate differs from KubeRay's (-KubeRay +ours):\n%s", diff)
		}
	}
	w.checkSecretOwners(want.Secrets, certs)
	if e := w.WaitEvent(rc.Name, "MTLSCertificatesUpdated"); !strings.HasPrefix(e.Note, "Updated head certificate SANs (IPs: [") &&
		!strings.HasPrefix(e.Note, "Updated worker certificate SANs (IPs: [") {
		t.Errorf("MTLSCertificatesUpdated note = %q", e.Note)
	}

	w.edit(rc.Name, func(rc *rayv1.RayCluster) { rc.Spec.TLSOptions.Enabled = ptr.To(false) })
	w.Eventually("Issuers and Certificates deleted", func() (bool, error) {
		issuers, certs = w.mtlsObjects()
		return len(issuers) == 0 && len(certs) == 0, nil
	})
}

// checkSecretOwners waits until each Secret KubeRay owns by its
// Certificate is owned the same way here (with the Certificate's UID).
func (w *world) checkSecretOwners(want []corev1.Secret, certs []certmanagerv1.Certificate) {
	w.T.Helper()
	uids := map[string]string{}
	for _, c := range certs {
		uids[c.Name] = string(c.UID)
	}
	for _, s := range want {
		owners := s.OwnerReferences
		for i := range owners {
			owners[i].UID = k8stypes.UID(uids[owners[i].Name])
		}
		var got []metav1.OwnerReference
		w.Eventually("owner of Secret "+s.Name, func() (bool, error) {
			secret := &corev1.Secret{}
			if !w.Get(s.Name, secret) {
				return false, nil
			}
			got = secret.OwnerReferences
			return cmp.Equal(owners, got), nil
		})
	}
}

// waitNoMTLS checks that a cluster that got its Pods has no cert-manager
// object and no TLS setting in them.
func (w *world) waitNoMTLS(name string, pods []corev1.Pod) {
	w.T.Helper()
	if issuers, certs := w.mtlsObjects(); len(issuers)+len(certs) != 0 {
		w.T.Errorf("%d Issuers and %d Certificates made", len(issuers), len(certs))
	}
	for _, p := range pods {
		parts := tlsPartsOf(p)
		if len(parts.RayTLSEnv) != 0 || slices.ContainsFunc(p.Spec.Volumes, func(v corev1.Volume) bool { return v.Name == "ray-tls" }) ||
			slices.ContainsFunc(p.Spec.InitContainers, func(c corev1.Container) bool { return c.Name == "wait-for-tls-ip-san" }) {
			w.T.Errorf("Pod %s of %s has TLS settings: %+v", p.Name, name, parts)
		}
	}
}

// TestMTLSGateOnFieldUnset: with the gate on, a cluster without
// tlsOptions (and one with enabled false) gets its Pods and nothing of
// mTLS.
func TestMTLSGateOnFieldUnset(t *testing.T) {
	w := newWorld(t, withGates(t, features.RayClusterMTLS))
	unset := w.newCluster("unset", group("small", 1))
	w.Create(unset)
	disabled := installcheck.Sample(t, "ray-cluster.mtls.yaml")
	disabled.Spec.TLSOptions.Enabled = ptr.To(false)
	w.Create(disabled)
	w.waitNoMTLS(unset.Name, w.WaitPods(unset.Name, nil, 2))
	w.waitNoMTLS(disabled.Name, w.WaitPods(disabled.Name, nil, 2))
}

// TestMTLSGateOff: without the gate the sample is refused with KubeRay's
// message, and neither Pods nor cert-manager objects are made.
func TestMTLSGateOff(t *testing.T) {
	w := newWorld(t)
	rc := installcheck.Sample(t, "ray-cluster.mtls.yaml")
	w.Create(rc)
	e := w.WaitEvent(rc.Name, "InvalidRayClusterSpec")
	if !strings.Contains(e.Note, "spec.tlsOptions requires the RayClusterMTLS feature gate to be enabled") {
		t.Errorf("event note = %q", e.Note)
	}
	w.waitNoMTLS(rc.Name, nil)
	if pods := w.Pods(rc.Name, nil); len(pods) != 0 {
		t.Errorf("%d Pods created with the gate off", len(pods))
	}
}

// TestMTLSRefusesManagedSettings: with the gate on, a cluster that sets a
// TLS variable the operator manages is refused with KubeRay's message and
// gets nothing.
func TestMTLSRefusesManagedSettings(t *testing.T) {
	w := newWorld(t, withGates(t, features.RayClusterMTLS))
	rc := installcheck.Sample(t, "ray-cluster.mtls.yaml")
	ray := &rc.Spec.WorkerGroupSpecs[0].Template.Spec.Containers[0]
	ray.Env = append(ray.Env, corev1.EnvVar{Name: "RAY_TLS_SERVER_KEY", Value: "/mine/tls.key"})
	w.Create(rc)
	e := w.WaitEvent(rc.Name, "InvalidRayClusterSpec")
	want := `cannot set RAY_TLS_SERVER_KEY environment variable in worker group "small-group" when tlsOptions is set - the operator manages TLS configuration automatically`
	if !strings.Contains(e.Note, want) {
		t.Errorf("event note = %q, want it to contain %q", e.Note, want)
	}
	w.waitNoMTLS(rc.Name, nil)
	if pods := w.Pods(rc.Name, nil); len(pods) != 0 {
		t.Errorf("%d Pods created for an invalid cluster", len(pods))
	}
}

// TestMTLSWithoutCertManager: on an API server without cert-manager's API
// the operator with the gate on still starts, refuses a cluster asking for
// mTLS with KubeRay's message and creates no Pod, and runs clusters
// without tlsOptions as usual.
func TestMTLSWithoutCertManager(t *testing.T) {
	env := testenv.Start(t)
	w := &world{World: testenv.NewWorld(t, env), clock: clocktesting.NewFakeClock(time.Now())}
	opts := raycluster.Options{WatchNamespaces: []string{w.NS}}
	withGates(t, features.RayClusterMTLS)(&opts)
	w.op = testenv.StartOperator(t, w.Env, operator.CacheOptions(w.NS), func(mgr manager.Manager) error {
		return raycluster.NewForManager(mgr, raycluster.Deps{Core: managerdeps.Core{Clock: w.clock}}, opts).SetupWithManager(mgr, 1)
	})
	rc := installcheck.Sample(t, "ray-cluster.mtls.yaml")
	w.Create(rc)
	plain := w.newCluster("plain", group("small", 1))
	w.Create(plain)
	e := w.WaitEvent(rc.Name, "InvalidRayClusterSpec")
	if want := "tlsOptions requires cert-manager, but cert-manager is not installed"; !strings.Contains(e.Note, want) {
		t.Errorf("event note = %q, want it to contain %q", e.Note, want)
	}
	w.WaitPods(plain.Name, nil, 2)
	if pods := w.Pods(rc.Name, nil); len(pods) != 0 {
		t.Errorf("%d Pods created without cert-manager", len(pods))
	}
}

// TestMTLSAutoscalerMatchesKubeRay: with autoscaling, the head's
// autoscaler sidecar gets KubeRay's TLS variables and mount (after its own
// variables), and the rest of the head's mTLS parts stay KubeRay's.
func TestMTLSAutoscalerMatchesKubeRay(t *testing.T) {
	w := newWorld(t, withGates(t, features.RayClusterMTLS))
	rc := installcheck.Sample(t, "ray-cluster.mtls.yaml")
	rc.Spec.EnableInTreeAutoscaling = ptr.To(true)
	w.Create(rc)
	want := readKubeRayMTLS(t, rc).Pods["head-autoscaler"]
	var certs []certmanagerv1.Certificate
	w.Eventually("3 Certificates", func() (bool, error) {
		_, certs = w.mtlsObjects()
		return len(certs) == 3, nil
	})
	w.issue(&certs[1])
	w.issue(&certs[2])
	got := w.WaitPods(rc.Name, headLabels(), 1)[0]
	if diff := cmp.Diff(tlsPartsOf(want), tlsPartsOf(got)); diff != "" {
		t.Errorf("head Pod: mTLS parts differ from KubeRay's (-KubeRay +ours):\n%s", diff)
	}
	autoscaler := func(p corev1.Pod) corev1.Container {
		i := slices.IndexFunc(p.Spec.Containers, func(c corev1.Container) bool { return c.Name == "autoscaler" })
		if i < 0 {
			t.Fatalf("no autoscaler in %s", p.Name)
		}
		c := p.Spec.Containers[i]
		var names []corev1.EnvVar
		for _, e := range c.Env {
			names = append(names, corev1.EnvVar{Name: e.Name})
		}
		tls := slices.DeleteFunc(slices.Clone(c.Env), func(e corev1.EnvVar) bool { return !isTLSEnv(e) })
		return corev1.Container{Env: append(names, tls...), VolumeMounts: c.VolumeMounts}
	}
	if diff := cmp.Diff(autoscaler(want), autoscaler(got)); diff != "" {
		t.Errorf("autoscaler: env names, TLS env and mounts differ from KubeRay's (-KubeRay +ours):\n%s", diff)
	}
}
