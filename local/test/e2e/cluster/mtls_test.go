package cluster_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	certmanagerv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	cmmeta "github.com/cert-manager/cert-manager/pkg/apis/meta/v1"
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
// worker joins the head; an HTTPMode RayJob on the cluster succeeds (the
// dashboard is HTTP, the driver reaches the GCS with TLS); and the GCS
// port refuses a TLS client that lacks the cluster's CA or a client
// certificate while it accepts one with both.
func TestRayClusterMTLS(t *testing.T) {
	began := time.Now()
	ns := shared.namespace(t)
	rc := shared.applySample(t, ns, "ray-cluster.mtls.yaml").(*rayv1.RayCluster)
	ctx, cancel := context.WithTimeout(t.Context(), mtlsTimeout)
	defer cancel()
	head := shared.waitHead(ctx, t, ns, rc.Name, "")
	var out string
	err := poll(ctx, func() (bool, error) {
		var err error
		out, err = shared.rayPython(ctx, ns, head, countAliveTLSNodes)
		return err == nil && strings.Contains(out, "alive 2"), nil
	})
	if err != nil {
		t.Fatalf("the worker did not join the head with TLS: %v\n%s", err, out)
	}
	if !strings.Contains(out, "RAY_USE_TLS 1") {
		t.Errorf("the head's container does not run with RAY_USE_TLS=1:\n%s", out)
	}
	t.Logf("head and worker up with TLS after %v", time.Since(began).Round(time.Second))
	requireCertificatesReady(t, ns)

	t.Run("RayJob", func(t *testing.T) {
		job := &rayv1.RayJob{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "rayjob-mtls"},
			Spec: rayv1.RayJobSpec{
				Entrypoint:      mtlsEntrypoint,
				SubmissionMode:  rayv1.HTTPMode,
				ClusterSelector: map[string]string{rayv1.LabelCluster: rc.Name},
			},
		}
		if err := shared.client.Create(t.Context(), job); err != nil {
			t.Fatalf("creating RayJob: %v", err)
		}
		requireSucceeded(t, shared.waitRayJob(t, ns, job.Name, rayJobTimeout), rc.Name)
	})
	t.Run("GCS port", func(t *testing.T) {
		pod, err := shared.clientset.CoreV1().Pods(ns).Get(t.Context(), head, metav1.GetOptions{})
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

// requireCertificatesReady: the operator's three Certificates (CA, head,
// worker) are Ready, issued by cert-manager.
func requireCertificatesReady(t *testing.T, ns string) {
	t.Helper()
	certs := &certmanagerv1.CertificateList{}
	if err := shared.client.List(t.Context(), certs, client.InNamespace(ns)); err != nil {
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
