package dashboard

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Serve proxy health check, as KubeRay does it.
const (
	// ServeProxyHealthPath is the Serve proxy's health endpoint.
	ServeProxyHealthPath = "/-/healthz"
	// DirectProxyTimeout bounds a health check sent straight to the Pod.
	DirectProxyTimeout = 2 * time.Second
)

// ProxyChecker reports whether the Ray Serve proxy of a Pod, listening on
// port, answers its health check.
type ProxyChecker func(ctx context.Context, pod *corev1.Pod, port int32) bool

// DirectProxyCheck checks the proxy at http://<pod IP>:<port>/-/healthz
// with the given timeout: healthy means HTTP 200. A Pod without an IP is
// not healthy.
func DirectProxyCheck(timeout time.Duration) ProxyChecker {
	httpClient := &http.Client{Timeout: timeout}
	return func(ctx context.Context, pod *corev1.Pod, port int32) bool {
		if pod.Status.PodIP == "" {
			return false
		}
		url := fmt.Sprintf("http://%s%s", net.JoinHostPort(pod.Status.PodIP, strconv.Itoa(int(port))), ServeProxyHealthPath)
		return answersOK(ctx, httpClient, url)
	}
}

// answersOK reports whether GET url answers HTTP 200.
func answersOK(ctx context.Context, c *http.Client, url string) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false
	}
	resp, err := c.Do(req)
	if err != nil {
		return false
	}
	defer func() { _ = resp.Body.Close() }()
	return resp.StatusCode == http.StatusOK
}
