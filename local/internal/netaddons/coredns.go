package netaddons

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/ray-operator/ray-operator/internal/controlplane"
)

// The kube-dns Service: selector-less, its one endpoint is CoreDNS on the
// node's address.
const (
	kubeDNSNamespace = metav1.NamespaceSystem
	kubeDNSName      = "kube-dns"
	dnsPort          = 53
)

// CoreDNS answers cluster DNS on the node's address behind the kube-dns
// Service (ClusterDNSAddr).
type CoreDNS struct {
	// Binary is the coredns executable (CoreDNSBinary).
	Binary string
}

// Name implements controlplane.Addon.
func (CoreDNS) Name() string { return "coredns" }

// Prepare creates the kube-dns Service and its EndpointSlice, so that
// kube-proxy's first rules have them.
func (CoreDNS) Prepare(ctx context.Context, host *controlplane.Host) error {
	clientset, err := kubernetes.NewForConfig(host.RESTConfig())
	if err != nil {
		return fmt.Errorf("creating a client for the kube-dns Service: %w", err)
	}
	// kube-system is created shortly after the API server is ready.
	return host.WaitFor(ctx, "the kube-dns Service", func(ctx context.Context) error {
		return createKubeDNS(ctx, clientset, host.Network())
	})
}

// Start starts CoreDNS on the node's address and waits until it is ready
// (its kubernetes plugin has synced).
func (c CoreDNS) Start(ctx context.Context, host *controlplane.Host) error {
	ports, err := controlplane.FreePorts(1)
	if err != nil {
		return err
	}
	path := filepath.Join(host.StateDir(), "Corefile")
	if err := os.WriteFile(path, corefile(host.Network(), host.KubeconfigPath(), ports[0]), 0o600); err != nil {
		return fmt.Errorf("writing the Corefile: %w", err)
	}
	if err := host.Run(c.Name(), c.Binary, []string{"-conf", path}); err != nil {
		return err
	}
	url := "http://127.0.0.1:" + strconv.Itoa(ports[0]) + "/ready"
	httpClient := &http.Client{Timeout: time.Second}
	return host.WaitFor(ctx, "CoreDNS "+url, func(ctx context.Context) error {
		return controlplane.Probe(ctx, httpClient, url)
	})
}

// corefile is CoreDNS's configuration: cluster names from the API server,
// everything else from the host's resolvers. It listens on the node's
// address only; the ready endpoint is on 127.0.0.1. The loop plugin makes
// CoreDNS exit rather than forward to itself should the host's resolv.conf
// name the node's address. "No such name" is not cached in the cluster
// domain, so that a Service or pod resolves as soon as CoreDNS sees it
// (pods look up names of objects created moments before); cluster answers
// live 5 s, the kubernetes plugin's TTL.
func corefile(n *controlplane.NodeNetwork, kubeconfig string, readyPort int) []byte {
	return fmt.Appendf(nil, `.:%d {
	bind %s
	errors
	ready 127.0.0.1:%d
	kubernetes %s in-addr.arpa ip6.arpa {
		kubeconfig %s
		pods insecure
		fallthrough in-addr.arpa ip6.arpa
	}
	forward . /etc/resolv.conf
	cache 30 {
		disable denial %s
	}
	loop
}
`, dnsPort, n.NodeIP, readyPort, controlplane.ClusterDomain, kubeconfig, controlplane.ClusterDomain)
}

// createKubeDNS creates the kube-dns Service with ClusterIP ClusterDNSAddr
// and an EndpointSlice naming NodeIP, unless they exist.
func createKubeDNS(ctx context.Context, clientset kubernetes.Interface, n *controlplane.NodeNetwork) error {
	service := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{
			Name:      kubeDNSName,
			Namespace: kubeDNSNamespace,
			Labels:    map[string]string{"k8s-app": kubeDNSName, "kubernetes.io/name": "CoreDNS"},
		},
		Spec: corev1.ServiceSpec{
			ClusterIP: ClusterDNSAddr.String(),
			Ports: []corev1.ServicePort{
				{Name: "dns", Protocol: corev1.ProtocolUDP, Port: dnsPort, TargetPort: intstr.FromInt32(dnsPort)},
				{Name: "dns-tcp", Protocol: corev1.ProtocolTCP, Port: dnsPort, TargetPort: intstr.FromInt32(dnsPort)},
			},
		},
	}
	_, err := clientset.CoreV1().Services(kubeDNSNamespace).Create(ctx, service, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating Service %s/%s: %w", kubeDNSNamespace, kubeDNSName, err)
	}
	_, err = clientset.DiscoveryV1().EndpointSlices(kubeDNSNamespace).Create(ctx, kubeDNSSlice(n), metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating the EndpointSlice of Service %s/%s: %w", kubeDNSNamespace, kubeDNSName, err)
	}
	return nil
}

// kubeDNSSlice is the EndpointSlice of the kube-dns Service: CoreDNS on the
// node's address, always ready.
func kubeDNSSlice(n *controlplane.NodeNetwork) *discoveryv1.EndpointSlice {
	port := func(name string, protocol corev1.Protocol) discoveryv1.EndpointPort {
		return discoveryv1.EndpointPort{Name: ptr.To(name), Protocol: ptr.To(protocol), Port: ptr.To[int32](dnsPort)}
	}
	return NodeSlice(kubeDNSNamespace, kubeDNSName, n, port("dns", corev1.ProtocolUDP), port("dns-tcp", corev1.ProtocolTCP))
}
