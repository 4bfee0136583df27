package node_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/ray-operator/ray-operator/local/test/netprobe"
)

// probe runs a netprobe command in pod ns/pod and returns its verdict.
func probe(t *testing.T, c *cluster, ns, pod string, cmd []string) string {
	t.Helper()
	cfg := &rest.Config{Host: "https://" + c.kubelet.String(), TLSClientConfig: rest.TLSClientConfig{Insecure: true}}
	var out, errOut strings.Builder
	if err := kubeletExecIn(t, cfg, ns, pod, cmd, &out, &errOut); err != nil {
		return fmt.Sprintf("exec failed: %v (%s)", err, errOut.String())
	}
	return strings.TrimSpace(out.String())
}

// waitProbe probes until the verdict is want.
func waitProbe(t *testing.T, c *cluster, ns, pod string, cmd []string, want string) {
	t.Helper()
	var got string
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		got = probe(t, c, ns, pod, cmd)
		return got == want, nil
	})
	if err != nil {
		t.Fatalf("%v from %s/%s: got %q, want %q", cmd[3:], ns, pod, got, want)
	}
}

// python is the host's python3, which the Ray-image pods of this node see
// (their Ray virtualenv is empty here).
const python = "python3"

// testNetworkPolicies: pods on the node are isolated as NetworkPolicies
// say, by the enforcer startCluster runs. Each denial is shown after the
// same path was seen open, and is a drop (timeout), not a refusal.
func testNetworkPolicies(t *testing.T, c *cluster) {
	nsA, nsB := "np-a", "np-b"
	for _, ns := range []string{nsA, nsB} {
		_, err := c.cs.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		mustCreate(t, err)
	}
	server := runPodIn(t, c, nsA, "server", "exec python3 -m http.server 8080")
	runPodIn(t, c, nsB, "client", "exec sleep 3600")
	serverAddr := netip.AddrPortFrom(netip.MustParseAddr(server.Status.PodIP), 8080)

	t.Run("ingress", func(t *testing.T) {
		waitProbe(t, c, nsB, "client", netprobe.TCP(python, serverAddr), netprobe.Connected)
		createPolicy(t, c, nsA, networkingv1.NetworkPolicySpec{PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}})
		waitProbe(t, c, nsB, "client", netprobe.TCP(python, serverAddr), netprobe.Timeout)
		if err := c.cs.NetworkingV1().NetworkPolicies(nsA).Delete(t.Context(), "policy", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		waitProbe(t, c, nsB, "client", netprobe.TCP(python, serverAddr), netprobe.Connected)
	})

	t.Run("egress", func(t *testing.T) {
		hostTCP := netprobe.ListenTCP(t, c.gateway)
		dns := echoUDP(t, netip.AddrPortFrom(c.gateway, 53))
		waitProbe(t, c, nsB, "client", netprobe.TCP(python, hostTCP), netprobe.Connected)
		waitProbe(t, c, nsB, "client", netprobe.UDP(python, dns), netprobe.Answered)
		udp, tcp := corev1.ProtocolUDP, corev1.ProtocolTCP
		port53 := intstr.FromInt32(53)
		createPolicy(t, c, nsB, networkingv1.NetworkPolicySpec{
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeEgress},
			Egress: []networkingv1.NetworkPolicyEgressRule{{Ports: []networkingv1.NetworkPolicyPort{
				{Protocol: &udp, Port: &port53}, {Protocol: &tcp, Port: &port53},
			}}},
		})
		waitProbe(t, c, nsB, "client", netprobe.TCP(python, hostTCP), netprobe.Timeout)
		if got := probe(t, c, nsB, "client", netprobe.UDP(python, dns)); got != netprobe.Answered {
			t.Errorf("udp %s (allowed by the policy) from the isolated pod: %q, want %q", dns, got, netprobe.Answered)
		}
		if got := probe(t, c, nsB, "client", netprobe.TCP(python, serverAddr)); got != netprobe.Timeout {
			t.Errorf("tcp %s (another pod) from the isolated pod: %q, want %q", serverAddr, got, netprobe.Timeout)
		}
	})
}

// runPodIn creates a Ray-image pod running script in ns and waits until it
// runs with an address; the namespace's deletion at cleanup removes it.
func runPodIn(t *testing.T, c *cluster, ns, name, script string) *corev1.Pod {
	t.Helper()
	pod := sleepPod(name, script)
	pod.Namespace = ns
	pod.Spec.TerminationGracePeriodSeconds = ptr.To[int64](1)
	var got *corev1.Pod
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		if got == nil {
			created, err := c.cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
			if err != nil {
				return false, nil // the namespace's service account may not exist yet
			}
			got = created
		}
		p, err := c.cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		got = p
		return p.Status.Phase == corev1.PodRunning && p.Status.PodIP != "", nil
	})
	if err != nil {
		t.Fatalf("pod %s/%s not running: %v; last %+v", ns, name, err, got)
	}
	t.Cleanup(func() {
		_ = c.cs.CoreV1().Pods(ns).Delete(context.Background(), name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
	})
	return got
}

// createPolicy creates NetworkPolicy "policy" selecting every pod of ns.
func createPolicy(t *testing.T, c *cluster, ns string, spec networkingv1.NetworkPolicySpec) {
	t.Helper()
	np := &networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Name: "policy", Namespace: ns}, Spec: spec}
	_, err := c.cs.NetworkingV1().NetworkPolicies(ns).Create(t.Context(), np, metav1.CreateOptions{})
	mustCreate(t, err)
	t.Cleanup(func() {
		_ = c.cs.NetworkingV1().NetworkPolicies(ns).Delete(context.Background(), "policy", metav1.DeleteOptions{})
	})
}

// echoUDP sends every datagram on addr back until the test ends.
func echoUDP(t *testing.T, addr netip.AddrPort) netip.AddrPort {
	t.Helper()
	pc, err := net.ListenPacket("udp", addr.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pc.Close() })
	go func() {
		buf := make([]byte, 64)
		for {
			n, from, err := pc.ReadFrom(buf)
			if errors.Is(err, net.ErrClosed) {
				return
			}
			if err == nil {
				_, _ = pc.WriteTo(buf[:n], from)
			}
		}
	}()
	return addr
}
