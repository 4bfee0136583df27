// Package clusternet_test checks the local control plane's node network
// (controlplane.NodeNetwork) with pod-like network namespaces on a bridge:
// ClusterIP Services through kube-proxy from the host and from pods
// (hairpin included), cluster DNS through the kube-dns Service, the API
// server through the kubernetes Service with a service account token, what
// the host sees of it (listeners on loopback and the bridge only, anonymous
// requests refused, secrets private), and that stopping leaves no process,
// nftables table or socket behind.
package clusternet_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/ray-operator/ray-operator/internal/controlplane"
	"github.com/ray-operator/ray-operator/internal/testing/capability"
	"github.com/ray-operator/ray-operator/internal/testing/testenv"
	"github.com/ray-operator/ray-operator/local/internal/hostlock"
	"github.com/ray-operator/ray-operator/local/internal/netaddons"
)

// timeout bounds every wait for the cluster to act.
const timeout = 60 * time.Second

// The test's pod network.
const (
	bridgeName = "rocnet0"
	podA       = "rocnet-a"
	podB       = "rocnet-b"
	nodeName   = "clusternet-node"
)

var (
	gateway = netip.MustParsePrefix("10.244.240.1/24")
	ipA     = netip.MustParseAddr("10.244.240.2")
	ipB     = netip.MustParseAddr("10.244.240.3")
)

// cluster is what the subtests share.
type cluster struct {
	cp       *controlplane.ControlPlane
	client   kubernetes.Interface
	ns       string
	a, b     *pod
	stateDir string
}

func TestClusterNetwork(t *testing.T) {
	if os.Geteuid() != 0 {
		capability.Missing(t, "needs root: creates a bridge, network namespaces and nftables rules and binds port 53")
	}
	t.Run("cluster", testCluster)
	// The subtest's cleanups have run.
	if err := checkNoLeftovers(bridgeName, podA, podB); err != nil {
		t.Error(err)
	}
}

func testCluster(t *testing.T) {
	// kube-proxy's table and port 53 are the machine's: wait for any local
	// cluster (make run, local/test/e2e/cluster) to finish first.
	lock, err := hostlock.Acquire(t.Context(), hostlock.DefaultPath, func() { t.Log("waiting for another local cluster to stop") })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = lock.Release() })
	pn := newPodNetwork(t, bridgeName, gateway)
	c := &cluster{a: pn.addPod(t, podA, ipA), b: pn.addPod(t, podB, ipB), stateDir: t.TempDir()}
	c.start(t)

	// First, before anything else gives kube-proxy and CoreDNS time.
	t.Run("cluster DNS answers a pod's first query once Start returns", c.testDNSReadyAtStart)
	t.Run("Start registers the node with NodeIP as InternalIP", c.testNode)
	t.Run("the host sees listeners on loopback and the bridge only, no anonymous access, private secrets", c.testExposure)
	t.Run("pods get a service account token volume and kube-root-ca.crt", c.testServiceAccountVolume)
	t.Run("a pod reaches the API server at the kubernetes Service with a token", c.testAPIFromPod)
	t.Run("a ClusterIP Service answers from the host and from pods", c.testClusterIP)
	t.Run("cluster DNS answers from a pod", c.testDNS)
	t.Run("Stop leaves no process, nftables table or socket", c.testStop)
}

// start starts the control plane with the node network and a namespace.
func (c *cluster) start(t *testing.T) {
	began := time.Now()
	addons, err := netaddons.New()
	if err != nil {
		t.Fatal(err)
	}
	cp, err := controlplane.Start(t.Context(), controlplane.Options{
		StateDir: c.stateDir,
		Network: &controlplane.NodeNetwork{
			NodeIP:   gateway.Addr(),
			PodCIDR:  gateway.Masked(),
			NodeName: nodeName,
			Addons:   addons,
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("control plane with node network ready in %v", time.Since(began).Round(time.Millisecond))
	t.Cleanup(func() {
		if err := cp.Stop(); err != nil {
			t.Errorf("stopping the control plane: %v", err)
		}
		if t.Failed() {
			logTails(t, c.stateDir, "kube-proxy", "coredns", "kube-apiserver")
		}
	})
	c.cp = cp
	if c.client, err = kubernetes.NewForConfig(cp.RESTConfig); err != nil {
		t.Fatal(err)
	}
	ns, err := c.client.CoreV1().Namespaces().Create(t.Context(),
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "clusternet-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c.ns = ns.Name
}

func (c *cluster) testNode(t *testing.T) {
	node, err := c.client.CoreV1().Nodes().Get(t.Context(), nodeName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: gateway.Addr().String()}, {Type: corev1.NodeHostName, Address: nodeName}}
	if diff := cmp.Diff(want, node.Status.Addresses); diff != "" {
		t.Errorf("node addresses (-want +got):\n%s", diff)
	}
}

func (c *cluster) testServiceAccountVolume(t *testing.T) {
	ctx := t.Context()
	c.waitDefaultServiceAccount(t)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "token", Namespace: c.ns},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
	}
	created, err := c.client.CoreV1().Pods(c.ns).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := checkTokenVolume(created); err != nil {
		t.Error(err)
	}
	ca := c.rootCA(t)
	if _, err := parseCertPool(ca); err != nil {
		t.Errorf("kube-root-ca.crt: %v", err)
	}
}

// checkTokenVolume fails unless the pod has the projected kube-api-access
// volume: a token, kube-root-ca.crt and the namespace.
func checkTokenVolume(pod *corev1.Pod) error {
	for _, v := range pod.Spec.Volumes {
		if !strings.HasPrefix(v.Name, "kube-api-access-") || v.Projected == nil {
			continue
		}
		var token, ca bool
		for _, s := range v.Projected.Sources {
			token = token || s.ServiceAccountToken != nil
			ca = ca || (s.ConfigMap != nil && s.ConfigMap.Name == "kube-root-ca.crt")
		}
		if token && ca {
			return nil
		}
		return fmt.Errorf("volume %s has token %v, kube-root-ca.crt %v", v.Name, token, ca)
	}
	return fmt.Errorf("pod has no kube-api-access volume: %+v", pod.Spec.Volumes)
}

// waitDefaultServiceAccount waits for the service account controller.
func (c *cluster) waitDefaultServiceAccount(t *testing.T) {
	testenv.Eventually(t, "ServiceAccount default", timeout, func() (bool, error) {
		_, err := c.client.CoreV1().ServiceAccounts(c.ns).Get(t.Context(), "default", metav1.GetOptions{})
		return err == nil, err
	})
}

// rootCA waits for the namespace's kube-root-ca.crt and returns its CA.
func (c *cluster) rootCA(t *testing.T) []byte {
	var ca string
	testenv.Eventually(t, "ConfigMap kube-root-ca.crt", timeout, func() (bool, error) {
		cm, err := c.client.CoreV1().ConfigMaps(c.ns).Get(t.Context(), "kube-root-ca.crt", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		ca = cm.Data["ca.crt"]
		return ca != "", nil
	})
	return []byte(ca)
}

func (c *cluster) testAPIFromPod(t *testing.T) {
	ctx := t.Context()
	c.waitDefaultServiceAccount(t)
	tr, err := c.client.CoreV1().ServiceAccounts(c.ns).CreateToken(ctx, "default", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("TokenRequest: %v", err)
	}
	pool, err := parseCertPool(c.rootCA(t))
	if err != nil {
		t.Fatal(err)
	}
	httpClient := c.a.httpClient(&tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12})
	url := "https://" + c.cp.KubernetesService.String() + "/api"
	testenv.Eventually(t, "GET "+url+" from pod a", timeout, func() (bool, error) {
		status, _, err := get(ctx, httpClient, url, tr.Status.Token)
		return status == http.StatusOK, fmt.Errorf("status %d: %v", status, err)
	})
}

func (c *cluster) testClusterIP(t *testing.T) {
	ctx := t.Context()
	serveHTTP(t, c.a, 8080, "pod a")
	svc := c.createService(t, "web", corev1.ServiceSpec{Ports: []corev1.ServicePort{
		{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80, TargetPort: intstr.FromInt32(8080)},
	}})
	// kube-proxy masquerades hairpin traffic only to endpoints on its own
	// node (nftables mode), which the endpoint's nodeName tells, as the
	// EndpointSlice controller sets it for pods.
	c.createSlice(t, "web", "web-a", 8080, discoveryv1.Endpoint{
		Addresses:  []string{ipA.String()},
		Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)},
		NodeName:   ptr.To(nodeName),
	})
	url := "http://" + net.JoinHostPort(svc.Spec.ClusterIP, "80") + "/"
	clients := map[string]*http.Client{
		"host":                   {Timeout: 2 * time.Second},
		"pod b":                  c.b.httpClient(nil),
		"pod a itself (hairpin)": c.a.httpClient(nil),
	}
	for from, httpClient := range clients {
		t.Run("from "+from, func(t *testing.T) {
			testenv.Eventually(t, "GET "+url, timeout, func() (bool, error) {
				status, body, err := get(ctx, httpClient, url, "")
				return status == http.StatusOK && body == "pod a", fmt.Errorf("status %d, body %q: %v", status, body, err)
			})
		})
	}
}

func (c *cluster) testDNS(t *testing.T) {
	web := c.createService(t, "dns-web", corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80}}})
	c.createService(t, "workers", corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, Ports: []corev1.ServicePort{{Name: "http", Port: 80}}})
	endpoint := func(ip, hostname string, ready bool) discoveryv1.Endpoint {
		return discoveryv1.Endpoint{Addresses: []string{ip}, Hostname: ptr.To(hostname), Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(ready)}}
	}
	c.createSlice(t, "workers", "workers-1", 80,
		endpoint(ipA.String(), "worker-a", true),
		endpoint(ipB.String(), "worker-b", true),
		endpoint("10.244.240.9", "worker-c", false))
	suffix := "." + c.ns + ".svc.cluster.local."
	want := map[string][]string{
		"dns-web" + suffix:                      {web.Spec.ClusterIP},
		"kubernetes.default.svc.cluster.local.": {c.cp.KubernetesService.Addr().String()},
		"workers" + suffix:                      {ipA.String(), ipB.String()},
		"worker-a.workers" + suffix:             {ipA.String()},
		"worker-b.workers" + suffix:             {ipB.String()},
	}
	resolver := c.b.resolver(net.JoinHostPort(netaddons.ClusterDNSAddr.String(), "53"))
	for name, addrs := range want {
		testenv.Eventually(t, name+" resolves from pod b", timeout, func() (bool, error) {
			got, err := resolver.LookupHost(t.Context(), name)
			slices.Sort(got)
			return slices.Equal(got, addrs), fmt.Errorf("got %v, want %v: %v", got, addrs, err)
		})
	}
}

// testDNSReadyAtStart asks once, with less time than Go's resolver waits
// before it asks again: a query lost because kube-proxy has not written
// its rules yet fails.
func (c *cluster) testDNSReadyAtStart(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
	defer cancel()
	name := "kubernetes.default.svc.cluster.local."
	got, err := c.b.resolver(net.JoinHostPort(netaddons.ClusterDNSAddr.String(), "53")).LookupIP(ctx, "ip4", name)
	if err != nil {
		t.Fatalf("looking up %s: %v", name, err)
	}
	if want := c.cp.KubernetesService.Addr(); len(got) != 1 || !got[0].Equal(net.IP(want.AsSlice())) {
		t.Errorf("%s = %v, want %v", name, got, want)
	}
}

func (c *cluster) testStop(t *testing.T) {
	if err := c.cp.Stop(); err != nil {
		t.Fatal(err)
	}
	tables, err := nftTables()
	if err != nil {
		t.Fatal(err)
	}
	for _, table := range tables {
		if strings.HasSuffix(table, " kube-proxy") {
			t.Errorf("nftables table %q remains", table)
		}
	}
	if procs := processesMentioning(c.stateDir); len(procs) > 0 {
		t.Errorf("processes of the control plane remain: %v", procs)
	}
	checkPortFree(t, gateway.Addr(), 53)
}
