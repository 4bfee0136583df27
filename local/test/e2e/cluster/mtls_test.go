package cluster_test

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"strings"
	"testing"
	"time"

	certmanagerv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	cmmeta "github.com/cert-manager/cert-manager/pkg/apis/meta/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// mtlsTimeout bounds the cluster's start: cert-manager issues the CA, then
// the head's and the worker's certificates once their Pods have IPs; the
// Pods then start Ray.
const mtlsTimeout = 5 * time.Minute

// gcsPort is the head's GCS port, which Ray serves with TLS.
const gcsPort = 6379

// countAliveTLSNodes prints how many Ray nodes are alive, as a driver that
// joins the cluster with the Pod's TLS settings sees them.
const countAliveTLSNodes = `
import os, ray
ray.init()
print("RAY_USE_TLS", os.environ.get("RAY_USE_TLS"))
print("alive", len([n for n in ray.nodes() if n["Alive"]]))
`

// tlsHandshakes connects to the head's GCS port three times with a 10 s
// timeout: with the system's CAs only (the cluster's CA missing), with the
// cluster's CA but no client certificate, and with the CA and the Pod's
// certificate; it prints each outcome.
const tlsHandshakes = `
import os, socket, ssl
addr = (%q, %d)
def connect(ctx):
    ctx.set_alpn_protocols(["h2"])
    with socket.create_connection(addr, timeout=10) as s, ctx.wrap_socket(s) as t:
        t.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
        if t.recv(1) == b"":
            raise ConnectionError("closed by the server")
        return t.version()
def attempt(name, ctx):
    try:
        print(name + ": accepted", connect(ctx))
    except (ssl.SSLError, ConnectionError) as e:
        print(name + ": refused:", e)
no_ca = ssl.create_default_context()
no_ca.check_hostname = False
attempt("without the CA", no_ca)
no_cert = ssl.create_default_context(cafile=os.environ["RAY_TLS_CA_CERT"])
no_cert.check_hostname = False
attempt("without a client certificate", no_cert)
mutual = ssl.create_default_context(cafile=os.environ["RAY_TLS_CA_CERT"])
mutual.check_hostname = False
mutual.load_cert_chain(os.environ["RAY_TLS_SERVER_CERT"], os.environ["RAY_TLS_SERVER_KEY"])
attempt("with the CA and a certificate", mutual)
`

// mtlsEntrypoint is a driver that runs tasks on the TLS cluster.
const mtlsEntrypoint = `python -c "import ray; ray.init(); print('sum of squares:', sum(ray.get([ray.remote(lambda x: x * x).remote(i) for i in range(5)])))"`

// TestRayClusterMTLS: the mTLS sample with the RayClusterMTLS gate on.
// cert-manager's own controller issues the cluster's CA and the head's and
// workers' certificates; the Pods start Ray with RAY_USE_TLS=1 and the
// worker joins the head; an HTTPMode and a K8sJobMode RayJob on the
// cluster succeed (the dashboard is HTTP, the driver reaches the GCS with
// TLS); and the GCS
// port refuses a TLS client that lacks the cluster's CA or a client
// certificate while it accepts one with both.
func TestRayClusterMTLS(t *testing.T) {
	t.Parallel() // mostly waiting: see the package comment (main_test.go)
	began := time.Now()
	ns := shared.namespace(t)
	rc := shared.applySample(t, ns, "ray-cluster.mtls.yaml").(*rayv1.RayCluster)
	ctx, cancel := context.WithTimeout(t.Context(), mtlsTimeout)
	defer cancel()
	head, out := waitTLSNodes(ctx, t, ns, rc.Name)
	if !strings.Contains(out, "RAY_USE_TLS 1") {
		t.Errorf("the head's container does not run with RAY_USE_TLS=1:\n%s", out)
	}
	t.Logf("head and worker up with TLS after %v", time.Since(began).Round(time.Second))
	requireCertificatesReady(t, ns)

	t.Run("RayJob", func(t *testing.T) {
		runRayJobOn(t, ns, "rayjob-mtls", rc.Name, rayv1.HTTPMode)
	})
	// KubeRay gives the K8sJobMode submitter no TLS setting: it talks to
	// the dashboard, which is HTTP, and the driver runs on the head.
	t.Run("K8sJobMode RayJob", func(t *testing.T) {
		runRayJobOn(t, ns, "rayjob-mtls-k8s", rc.Name, rayv1.K8sJobMode)
	})
	t.Run("GCS port", func(t *testing.T) {
		pod, err := shared.Clientset.CoreV1().Pods(ns).Get(t.Context(), head, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var out string
		out, err = shared.rayPython(t.Context(), ns, head, fmt.Sprintf(tlsHandshakes, pod.Status.PodIP, gcsPort))
		if err != nil {
			t.Fatalf("running the handshakes: %v\n%s", err, out)
		}
		t.Logf("handshakes with %s:%d:\n%s", pod.Status.PodIP, gcsPort, out)
		for _, want := range []string{
			"without the CA: refused: [SSL: CERTIFICATE_VERIFY_FAILED]",
			"without a client certificate: refused:",
			"with the CA and a certificate: accepted TLS",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("handshake outcome %q missing", want)
			}
		}
	})
}

// waitTLSNodes waits until the cluster's head and worker are alive as a
// driver joining with the Pod's TLS settings sees them, and returns the
// head Pod's name and what the driver printed.
func waitTLSNodes(ctx context.Context, t *testing.T, ns, cluster string) (head, out string) {
	t.Helper()
	head = shared.waitHead(ctx, t, ns, cluster, "")
	err := poll(ctx, func() (bool, error) {
		var err error
		out, err = shared.rayPython(ctx, ns, head, countAliveTLSNodes)
		return err == nil && strings.Contains(out, "alive 2"), nil
	})
	if err != nil {
		t.Fatalf("the worker did not join the head with TLS: %v\n%s", err, out)
	}
	return head, out
}

// runRayJobOn runs the mTLS entrypoint as RayJob name on the existing
// cluster in mode and requires it to succeed there.
func runRayJobOn(t *testing.T, ns, name, cluster string, mode rayv1.JobSubmissionMode) {
	t.Helper()
	job := &rayv1.RayJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: rayv1.RayJobSpec{
			Entrypoint: mtlsEntrypoint, SubmissionMode: mode,
			ClusterSelector: map[string]string{rayv1.LabelCluster: cluster},
		},
	}
	if err := shared.Client.Create(t.Context(), job); err != nil {
		t.Fatalf("creating RayJob: %v", err)
	}
	requireSucceeded(t, shared.waitRayJob(t, ns, name, rayJobTimeout), cluster)
}

// requireCertificatesReady: the operator's three Certificates (CA, head,
// worker) are Ready, issued by cert-manager.
func requireCertificatesReady(t *testing.T, ns string) {
	t.Helper()
	certs := &certmanagerv1.CertificateList{}
	if err := shared.Client.List(t.Context(), certs, client.InNamespace(ns)); err != nil {
		t.Fatalf("listing Certificates: %v", err)
	}
	if len(certs.Items) != 3 {
		t.Errorf("want 3 Certificates (CA, head, worker), have %d", len(certs.Items))
	}
	for _, c := range certs.Items {
		ready := false
		for _, cond := range c.Status.Conditions {
			ready = ready || (cond.Type == certmanagerv1.CertificateConditionReady && cond.Status == cmmeta.ConditionTrue)
		}
		if !ready || c.Status.Revision == nil {
			t.Errorf("Certificate %s is not issued: %+v", c.Name, c.Status)
		}
	}
}

// handshakeWithPEMs connects to the head's GCS port as a client that
// presents the given certificate and key (PEM text, written to temporary
// files in the Pod, with the CA) without verifying the server's, and prints
// whether the server accepted it.
const handshakeWithPEMs = `
import os, socket, ssl, tempfile
addr = (%q, %d)
d = tempfile.mkdtemp()
for name, text in (("ca.crt", %q), ("tls.crt", %q), ("tls.key", %q)):
    with open(os.path.join(d, name), "w") as f:
        f.write(text)
ctx = ssl.create_default_context(cafile=os.path.join(d, "ca.crt"))
ctx.check_hostname = False
# What is checked is the server's side: that it accepts the renewed client
# certificate. The GCS goes on presenting the certificate it started with,
# which expires 30 s after the renewal; a client that verified it would
# fail for that, however late it ran (seen under load).
ctx.verify_mode = ssl.CERT_NONE
ctx.load_cert_chain(os.path.join(d, "tls.crt"), os.path.join(d, "tls.key"))
ctx.set_alpn_protocols(["h2"])
try:
    with socket.create_connection(addr, timeout=10) as s, ctx.wrap_socket(s) as t:
        t.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
        if t.recv(1) == b"":
            raise ConnectionError("closed by the server")
        print("renewed certificate: accepted", t.version())
except (ssl.SSLError, ConnectionError) as e:
    print("renewed certificate: refused:", e)
`

// TestRayClusterMTLSOperatorPKI: the operator-issued mTLS sample (no
// cert-manager object). The operator issues the cluster's CA and the head's
// and workers' certificates; the worker joins the head with TLS and a
// RayJob succeeds; the GCS port refuses a client without the CA. The suite's
// operator issues 90 s leaves (--mtls-certificate-duration): the head's is
// issued again 60 s after it was, before it expires, by the same CA, and
// the head's running GCS accepts a client presenting the renewed
// certificate.
func TestRayClusterMTLSOperatorPKI(t *testing.T) {
	t.Parallel() // mostly waiting: see the package comment (main_test.go)
	began := time.Now()
	ns := shared.namespace(t)
	rc := shared.applySample(t, ns, "ray-cluster.mtls-operator.yaml").(*rayv1.RayCluster)
	ctx, cancel := context.WithTimeout(t.Context(), mtlsTimeout)
	defer cancel()
	head, _ := waitTLSNodes(ctx, t, ns, rc.Name)
	t.Logf("head and worker up with operator-issued certificates after %v", time.Since(began).Round(time.Second))
	certs := &certmanagerv1.CertificateList{}
	if err := shared.Client.List(t.Context(), certs, client.InNamespace(ns)); err != nil || len(certs.Items) != 0 {
		t.Errorf("Certificates in the namespace: %d (%v), want none", len(certs.Items), err)
	}
	pod, err := shared.Clientset.CoreV1().Pods(ns).Get(t.Context(), head, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out, err := shared.rayPython(t.Context(), ns, head, fmt.Sprintf(tlsHandshakes, pod.Status.PodIP, gcsPort))
	if err != nil || !strings.Contains(out, "without the CA: refused: [SSL: CERTIFICATE_VERIFY_FAILED]") ||
		!strings.Contains(out, "with the CA and a certificate: accepted TLS") {
		t.Errorf("handshakes with %s:%d (%v):\n%s", pod.Status.PodIP, gcsPort, err, out)
	}
	first := headLeafSecret(t, ns, rc.Name)
	renewal := watchRenewal(ctx, t, first)

	runRayJobOn(t, ns, "rayjob-mtls-operator", rc.Name, rayv1.HTTPMode)

	t.Run("renewal", func(t *testing.T) {
		var renewed *corev1.Secret
		select {
		case renewed = <-renewal:
		case <-ctx.Done():
			t.Fatalf("the head certificate was not issued again: %v", ctx.Err())
		}
		if renewed == nil {
			t.Fatal("the watch of the head certificate Secret ended before a renewal")
		}
		// The RayJob may outlast a renewal or two: what is checked is the
		// first one, which the watch kept, by the times the operator wrote
		// in it (it issues a certificate valid from the moment it does).
		old, now := parseLeaf(t, first), parseLeaf(t, renewed)
		t.Logf("head certificate %v..%v renewed with %v..%v", old.NotBefore, old.NotAfter, now.NotBefore, now.NotAfter)
		if !now.NotBefore.Before(old.NotAfter) || !now.NotAfter.After(old.NotAfter) {
			t.Errorf("renewed after the old certificate expired, or not extended")
		}
		if !bytes.Equal(renewed.Data["ca.crt"], first.Data["ca.crt"]) {
			t.Error("the CA changed with the leaf's renewal")
		}
		// The handshake uses the Secret as it is now: the first renewal's
		// certificate may have expired meanwhile.
		current := headLeafSecret(t, ns, rc.Name)
		if bytes.Equal(current.Data["tls.crt"], first.Data["tls.crt"]) {
			t.Fatal("the head certificate Secret holds the first certificate again")
		}
		out, err := shared.rayPython(t.Context(), ns, head, fmt.Sprintf(handshakeWithPEMs, pod.Status.PodIP, gcsPort,
			current.Data["ca.crt"], current.Data["tls.crt"], current.Data["tls.key"]))
		if err != nil || !strings.Contains(out, "renewed certificate: accepted TLS") {
			t.Errorf("the head's GCS and the renewed certificate (%v):\n%s", err, out)
		}
	})
}

// watchRenewal watches the head's certificate Secret from first's
// resourceVersion on and sends the first version whose certificate
// differs from first's; the channel is closed without one if the watch
// ends first.
func watchRenewal(ctx context.Context, t *testing.T, first *corev1.Secret) <-chan *corev1.Secret {
	t.Helper()
	w, err := shared.Clientset.CoreV1().Secrets(first.Namespace).Watch(ctx, metav1.ListOptions{
		FieldSelector:   "metadata.name=" + first.Name,
		ResourceVersion: first.ResourceVersion,
	})
	if err != nil {
		t.Fatalf("watching the head certificate Secret: %v", err)
	}
	t.Cleanup(w.Stop)
	renewed := make(chan *corev1.Secret, 1)
	go func() {
		defer close(renewed)
		for ev := range w.ResultChan() {
			if s, ok := ev.Object.(*corev1.Secret); ok && !bytes.Equal(s.Data["tls.crt"], first.Data["tls.crt"]) {
				renewed <- s
				return
			}
		}
	}()
	return renewed
}

// headLeafSecret reads the head's certificate Secret.
func headLeafSecret(t *testing.T, ns, cluster string) *corev1.Secret {
	t.Helper()
	s, err := shared.Clientset.CoreV1().Secrets(ns).Get(t.Context(), "ray-head-secret-"+cluster, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("reading the head certificate Secret: %v", err)
	}
	return s
}

func parseLeaf(t *testing.T, s *corev1.Secret) *x509.Certificate {
	t.Helper()
	block, _ := pem.Decode(s.Data["tls.crt"])
	if block == nil {
		t.Fatalf("Secret %s holds no PEM certificate", s.Name)
	}
	c, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
