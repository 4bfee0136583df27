package netaddons

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	componentbaseconfigv1alpha1 "k8s.io/component-base/config/v1alpha1"
	kubeproxyconfigv1alpha1 "k8s.io/kube-proxy/config/v1alpha1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/ray-operator/ray-operator/internal/controlplane"
)

// kubeProxyMode is the proxier kube-proxy runs: nftables works on this
// project's Linux hosts (the kernel has nf_tables, nat and br_netfilter;
// Debian's nft is installed by hack/node-packages.sh).
const kubeProxyMode = "nftables"

// KubeProxyTable is the nftables table kube-proxy keeps its rules in (one
// per IP family, both named so).
const KubeProxyTable = "kube-proxy"

// kubeProxyBinary is kube-proxy's name in the Kubernetes binaries'
// directory (hack/k8s-binaries.sh builds it with kube-apiserver).
const kubeProxyBinary = "kube-proxy"

// KubeProxy is kube-proxy in nftables mode, for ClusterIP Services.
type KubeProxy struct{}

// Name implements controlplane.Addon.
func (KubeProxy) Name() string { return kubeProxyBinary }

// Prepare implements controlplane.Addon: kube-proxy serves the Services
// others create.
func (KubeProxy) Prepare(context.Context, *controlplane.Host) error { return nil }

// Start writes kube-proxy's configuration, starts it and waits until its
// /healthz answers and it has written its rules. When the control plane
// stops, kube-proxy is made to remove its rules, and none may remain.
func (KubeProxy) Start(ctx context.Context, host *controlplane.Host) error {
	binary := filepath.Join(host.BinDir(), kubeProxyBinary)
	if err := controlplane.CheckExecutable(binary, controlplane.BinaryHint); err != nil {
		return err
	}
	ports, err := controlplane.FreePorts(2)
	if err != nil {
		return err
	}
	healthzPort, metricsPort := ports[0], ports[1]
	config, err := kubeProxyConfig(host.Network(), host.KubeconfigPath(), healthzPort, metricsPort)
	if err != nil {
		return err
	}
	path := filepath.Join(host.StateDir(), "kube-proxy.yaml")
	if err := os.WriteFile(path, config, 0o600); err != nil {
		return fmt.Errorf("writing kube-proxy's configuration: %w", err)
	}
	if err := host.Run(kubeProxyBinary, binary, []string{"--config=" + path}); err != nil {
		return err
	}
	host.AtStop(func() error { return cleanUpKubeProxy(binary, host.StateDir()) })
	return waitKubeProxy(ctx, host, healthzPort, metricsPort)
}

// waitKubeProxy waits until kube-proxy's /healthz answers and it has
// written its rules.
func waitKubeProxy(ctx context.Context, host *controlplane.Host, healthzPort, metricsPort int) error {
	httpClient := &http.Client{Timeout: time.Second}
	healthz := "http://127.0.0.1:" + strconv.Itoa(healthzPort) + "/healthz"
	err := host.WaitFor(ctx, "kube-proxy "+healthz, func(ctx context.Context) error {
		return controlplane.Probe(ctx, httpClient, healthz)
	})
	if err != nil {
		return err
	}
	// /healthz answers ok before the first sync too (nothing is pending
	// yet); the sync metric appears once rules are written.
	metrics := "http://127.0.0.1:" + strconv.Itoa(metricsPort) + "/metrics"
	return host.WaitFor(ctx, "kube-proxy's first sync of the rules", func(ctx context.Context) error {
		return probeMetric(ctx, httpClient, metrics, kubeProxySyncedMetric)
	})
}

// kubeProxySyncedMetric starts the metric line kube-proxy writes once it
// has synced the IPv4 rules.
const kubeProxySyncedMetric = `kubeproxy_sync_proxy_rules_last_timestamp_seconds{ip_family="IPv4"} `

// probeMetric fails unless the Prometheus text at url has a line starting
// with series.
func probeMetric(ctx context.Context, c *http.Client, url, series string) error {
	body, err := controlplane.Get(ctx, c, url)
	if err != nil {
		return err
	}
	for line := range strings.Lines(string(body)) {
		if strings.HasPrefix(line, series) {
			return nil
		}
	}
	return fmt.Errorf("%s has no %s", url, strings.TrimSpace(series))
}

// kubeProxyConfig is kube-proxy's KubeProxyConfiguration for network n.
// Conntrack limits and timeouts are 0, which makes kube-proxy leave the
// kernel's settings alone instead of writing sysctls.
func kubeProxyConfig(n *controlplane.NodeNetwork, kubeconfig string, healthzPort, metricsPort int) ([]byte, error) {
	config := kubeproxyconfigv1alpha1.KubeProxyConfiguration{
		TypeMeta: metav1.TypeMeta{
			APIVersion: kubeproxyconfigv1alpha1.SchemeGroupVersion.String(),
			Kind:       "KubeProxyConfiguration",
		},
		ClientConnection:   componentbaseconfigv1alpha1.ClientConnectionConfiguration{Kubeconfig: kubeconfig},
		HostnameOverride:   n.NodeName,
		BindAddress:        n.NodeIP.String(),
		HealthzBindAddress: "127.0.0.1:" + strconv.Itoa(healthzPort),
		MetricsBindAddress: "127.0.0.1:" + strconv.Itoa(metricsPort),
		Mode:               kubeProxyMode,
		DetectLocalMode:    "ClusterCIDR",
		ClusterCIDR:        n.PodCIDR.String(),
		Conntrack: kubeproxyconfigv1alpha1.KubeProxyConntrackConfiguration{
			MaxPerCore:            ptr.To[int32](0),
			Min:                   ptr.To[int32](0),
			TCPEstablishedTimeout: &metav1.Duration{},
			TCPCloseWaitTimeout:   &metav1.Duration{},
		},
	}
	data, err := yaml.Marshal(config)
	if err != nil {
		return nil, fmt.Errorf("encoding kube-proxy's configuration: %w", err)
	}
	return data, nil
}

// cleanUpKubeProxy runs `kube-proxy --cleanup`, which removes the rules of
// every proxy mode, once kube-proxy has stopped, and fails if a kube-proxy
// nftables table is left.
func cleanUpKubeProxy(binary, logDir string) error {
	out, err := exec.Command(binary, "--cleanup").CombinedOutput()
	logPath := filepath.Join(logDir, kubeProxyBinary+"-cleanup.log")
	_ = os.WriteFile(logPath, out, 0o600)
	if err != nil {
		return fmt.Errorf("kube-proxy --cleanup: %w; last log lines:\n%s", err, lastLines(out, 5))
	}
	tables, err := nftTables()
	if err != nil {
		return err
	}
	for _, t := range tables {
		if strings.HasSuffix(t, " "+KubeProxyTable) {
			return fmt.Errorf("kube-proxy --cleanup left nftables table %q", t)
		}
	}
	return nil
}

// nftTables lists the host's nftables tables ("ip kube-proxy", ...).
func nftTables() ([]string, error) {
	out, err := exec.Command("nft", "list", "tables").Output()
	if err != nil {
		return nil, fmt.Errorf("nft list tables: %w", controlplane.WithStderr(err))
	}
	var tables []string
	for line := range strings.Lines(string(out)) {
		if t, ok := strings.CutPrefix(strings.TrimSpace(line), "table "); ok {
			tables = append(tables, t)
		}
	}
	return tables, nil
}

// lastLines returns the last n lines of out.
func lastLines(out []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
