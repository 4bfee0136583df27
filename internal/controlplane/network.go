package controlplane

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"runtime"
	"strconv"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
)

// NodeNetwork makes the control plane serve pods that run on this host in
// network namespaces on a bridge: kube-apiserver listens on and advertises
// NodeIP (and no other address), Node NodeName is registered with it, and
// the Addons (the local module's kube-proxy and CoreDNS) start once the API
// server answers. The bridge and its address must exist before Start.
type NodeNetwork struct {
	// NodeIP is the bridge (gateway) address: the API server listens on it
	// and advertises it as the endpoint of the kubernetes Service, the
	// kubeconfig names it, CoreDNS listens on it and Node NodeName has it
	// as its InternalIP.
	NodeIP netip.Addr
	// PodCIDR is the pods' address range on the bridge; kube-proxy takes
	// traffic from it as cluster traffic (not masqueraded).
	PodCIDR netip.Prefix
	// NodeName names the node the pods run on (kube-proxy's
	// hostname-override). Start registers Node NodeName when it does not
	// exist, with InternalIP NodeIP, because kube-proxy waits up to 30 s for
	// it otherwise; the node agent then keeps its status.
	NodeName string
	// Addons are prepared one after another, then started concurrently,
	// once the node is registered.
	Addons []Addon
}

// KubernetesServiceAddr is the kubernetes Service in default: the API
// server as pods reach it (in serviceClusterIPRange).
var KubernetesServiceAddr = netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 96, 0, 1}), 443)

// ClusterDomain is the DNS domain of Services and pods.
const ClusterDomain = "cluster.local"

// complete checks n.
func (n *NodeNetwork) complete() error {
	switch {
	case !n.NodeIP.Is4():
		return fmt.Errorf("NodeNetwork.NodeIP %v is not an IPv4 address", n.NodeIP)
	case !n.PodCIDR.IsValid() || !n.PodCIDR.Contains(n.NodeIP):
		return fmt.Errorf("NodeNetwork.PodCIDR %v does not contain NodeIP %v", n.PodCIDR, n.NodeIP)
	case n.NodeName == "":
		return errors.New("NodeNetwork.NodeName is required")
	}
	n.PodCIDR = n.PodCIDR.Masked()
	return nil
}

// servingNames are the names pods use for the API server: NodeIP, the
// kubernetes Service's ClusterIP and its DNS names. None without a network.
func (n *NodeNetwork) servingNames() servingNames {
	if n == nil {
		return servingNames{}
	}
	return servingNames{
		ips: []net.IP{net.IP(n.NodeIP.AsSlice()), net.IP(KubernetesServiceAddr.Addr().AsSlice())},
		dns: []string{"kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc." + ClusterDomain},
	}
}

// apiServerAddr is the one address kube-apiserver listens on, which every
// client on this host uses: 127.0.0.1 without a network; NodeIP with one,
// where kube-proxy sends the pods' traffic to the kubernetes Service and
// the host reaches it too.
func (n *NodeNetwork) apiServerAddr() netip.Addr {
	if n == nil {
		return netip.AddrFrom4([4]byte{127, 0, 0, 1})
	}
	return n.NodeIP
}

// apiServerURL is the https address of kube-apiserver on port: on
// apiServerAddr, which its serving certificate covers.
func (n *NodeNetwork) apiServerURL(port int) string {
	return "https://" + net.JoinHostPort(n.apiServerAddr().String(), strconv.Itoa(port))
}

// apiServerArgs are kube-apiserver's flags for where it listens and how it
// reaches kubelets: it listens on and advertises apiServerAddr only.
func (n *NodeNetwork) apiServerArgs(creds *credentials) []string {
	addr := n.apiServerAddr().String()
	args := []string{"--bind-address=" + addr, "--advertise-address=" + addr}
	if n == nil {
		return args
	}
	return append(args,
		"--kubelet-client-certificate="+creds.kubeletClient.certFile,
		"--kubelet-client-key="+creds.kubeletClient.keyFile,
		"--kubelet-preferred-address-types="+string(corev1.NodeInternalIP),
		// The aggregation layer, for metrics-server on the host: it
		// trusts the user the API server names in these headers on
		// requests made with the front-proxy client certificate, and is
		// reached at its Service's endpoints rather than the ClusterIP.
		"--requestheader-client-ca-file="+creds.frontProxy.caFile,
		"--requestheader-allowed-names="+frontProxyClientUser,
		"--requestheader-username-headers=X-Remote-User",
		"--requestheader-group-headers=X-Remote-Group",
		"--requestheader-extra-headers-prefix=X-Remote-Extra-",
		"--proxy-client-cert-file="+creds.frontProxy.certFile,
		"--proxy-client-key-file="+creds.frontProxy.keyFile,
		"--enable-aggregator-routing=true",
	)
}

// controllerManagerArgs are kube-controller-manager's flags for a network:
// the root-ca-cert-publisher puts the serving CA into every namespace's
// kube-root-ca.crt ConfigMap, which pods' service account volumes hold.
func (n *NodeNetwork) controllerManagerArgs(creds *credentials) []string {
	if n == nil {
		return nil
	}
	return []string{"--root-ca-file=" + creds.servingCAFile}
}

// startNodeNetwork registers the node, then prepares and starts the
// network's addons.
func (cp *ControlPlane) startNodeNetwork(ctx context.Context, opts *Options, creds *credentials) error {
	n := opts.Network
	if n == nil {
		return nil
	}
	clientset, err := kubernetes.NewForConfig(cp.RESTConfig)
	if err != nil {
		return fmt.Errorf("creating client for the node network: %w", err)
	}
	if err := registerNode(ctx, clientset, n); err != nil {
		return err
	}
	return runAddons(ctx, &Host{cp: cp, opts: opts, creds: creds}, n.Addons)
}

// runAddons prepares addons one after another, then starts them all at once
// and waits until every one is ready.
func runAddons(ctx context.Context, host *Host, addons []Addon) error {
	for _, addon := range addons {
		if err := addon.Prepare(ctx, host); err != nil {
			return fmt.Errorf("preparing %s: %w", addon.Name(), err)
		}
	}
	g, gctx := errgroup.WithContext(ctx)
	for _, addon := range addons {
		g.Go(func() error {
			if err := addon.Start(gctx, host); err != nil {
				return fmt.Errorf("starting %s: %w", addon.Name(), err)
			}
			return nil
		})
	}
	return g.Wait()
}

// registerNode creates Node n.NodeName with InternalIP n.NodeIP unless it
// exists. The node agent finds it and updates its status (virtual-kubelet
// creates a node only when none exists).
func registerNode(ctx context.Context, clientset kubernetes.Interface, n *NodeNetwork) error {
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: n.NodeName,
			Labels: map[string]string{
				corev1.LabelHostname:   n.NodeName,
				corev1.LabelOSStable:   runtime.GOOS,
				corev1.LabelArchStable: runtime.GOARCH,
			},
		},
	}
	_, err := clientset.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("registering node %s: %w", n.NodeName, err)
	}
	// The API server drops status on create; the node lifecycle controller
	// may write it meanwhile.
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		current, err := clientset.CoreV1().Nodes().Get(ctx, n.NodeName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		current.Status.Addresses = []corev1.NodeAddress{
			{Type: corev1.NodeInternalIP, Address: n.NodeIP.String()},
			{Type: corev1.NodeHostName, Address: n.NodeName},
		}
		_, err = clientset.CoreV1().Nodes().UpdateStatus(ctx, current, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return fmt.Errorf("setting the addresses of node %s: %w", n.NodeName, err)
	}
	return nil
}
