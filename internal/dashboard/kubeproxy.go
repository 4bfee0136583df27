package dashboard

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/naming"
)

// Through the proxy, dashboard calls are get (GET), create (POST), update
// (PUT) and delete (DELETE) on services/proxy, health checks get on
// pods/proxy.
//+kubebuilder:rbac:groups="",resources=services/proxy,verbs=get;create;update;patch;delete
//+kubebuilder:rbac:groups="",resources=pods/proxy,verbs=get

// KubeProxyTimeout bounds a call through the API server's proxy, KubeRay's
// 10 s (instead of the 2 s of a direct call).
const KubeProxyTimeout = 10 * time.Second

// KubeProxy reaches Ray heads through the API server's proxy subresources
// (--use-kubernetes-proxy), for operators that cannot reach Pods: outside
// the cluster, or behind NetworkPolicies. Dashboard calls go to
// services/<head-svc>:dashboard/proxy, Serve proxy health checks to
// pods/<pod>:<port>/proxy, with the operator's own credentials.
type KubeProxy struct {
	host string
	http *http.Client
}

// NewKubeProxy returns a KubeProxy for the API server of cfg.
func NewKubeProxy(cfg *rest.Config) (*KubeProxy, error) {
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("building the API server proxy client: %w", err)
	}
	client.Timeout = KubeProxyTimeout
	// client's transport adds the operator's credentials to every request,
	// whatever its host: it must follow no redirect a head answers with.
	client = refusingRedirects(client)
	host := strings.TrimRight(cfg.Host, "/")
	if !strings.Contains(host, "://") {
		host = "https://" + host
	}
	return &KubeProxy{host: host, http: client}, nil
}

// DashboardURL is the base URL of cluster's dashboard through its head
// Service's proxy subresource.
func (p *KubeProxy) DashboardURL(cluster *rayv1.RayCluster) string {
	return fmt.Sprintf("%s/api/v1/namespaces/%s/services/%s:%s/proxy",
		p.host, cluster.Namespace, naming.HeadServiceName(cluster), rayv1.DashboardPortName)
}

// Clients returns dashboard clients that send their requests with the
// API server's credentials and KubeProxyTimeout.
func (p *KubeProxy) Clients() ClientProvider {
	return NewHTTPProvider(WithHTTPClient(p.http))
}

// ProxyCheck checks a Serve proxy through the Pod's proxy subresource:
// healthy means HTTP 200.
func (p *KubeProxy) ProxyCheck() ProxyChecker {
	return func(ctx context.Context, pod *corev1.Pod, port int32) error {
		url := fmt.Sprintf("%s/api/v1/namespaces/%s/pods/%s:%d/proxy%s", p.host, pod.Namespace, pod.Name, port, ServeProxyHealthPath)
		return answersOK(ctx, p.http, url)
	}
}
