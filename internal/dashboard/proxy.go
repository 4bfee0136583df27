package dashboard

import (
	"context"
	"errors"
	"fmt"
	"io"
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

// ProxyChecker checks the Ray Serve proxy of a Pod, listening on port: nil
// means healthy (HTTP 200, whatever the body); the error says what failed.
type ProxyChecker func(ctx context.Context, pod *corev1.Pod, port int32) error

// ErrNoPodIP is the health check of a Pod that has no IP yet.
var ErrNoPodIP = errors.New("the Pod has no IP yet")

// DirectProxyCheck checks the proxy at http://<pod IP>:<port>/-/healthz
// with the given timeout.
func DirectProxyCheck(timeout time.Duration) ProxyChecker {
	httpClient := refusingRedirects(&http.Client{Timeout: timeout, Transport: directTransport})
	return func(ctx context.Context, pod *corev1.Pod, port int32) error {
		if pod.Status.PodIP == "" {
			return fmt.Errorf("serve proxy health check of Pod %s/%s: %w", pod.Namespace, pod.Name, ErrNoPodIP)
		}
		url := fmt.Sprintf("http://%s%s", net.JoinHostPort(pod.Status.PodIP, strconv.Itoa(int(port))), ServeProxyHealthPath)
		return answersOK(ctx, httpClient, url)
	}
}

// answersOK checks that GET url answers HTTP 200. As KubeRay, the body of
// a 200 is not judged (nor waited for); the start of another answer's body
// is quoted in the error.
func answersOK(ctx context.Context, c *http.Client, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("serve proxy health check: %w", err)
	}
	resp, err := c.Do(req)
	if err != nil {
		return fmt.Errorf("serve proxy health check: %w", requestError(err))
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode == http.StatusOK {
		return nil
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody+1))
	return fmt.Errorf("serve proxy health check GET %s: %d %s: %s", url, resp.StatusCode,
		http.StatusText(resp.StatusCode), snippet(body))
}
