package podworker

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/clock"

	"github.com/ray-operator/ray-operator/local/internal/sandbox"
)

// handlerTarget is what probes and hooks act on: one attempt of a container.
type handlerTarget struct {
	proc Process
	ip   netip.Addr
	// dial connects from inside the pod's network namespace: an httpGet,
	// tcpSocket or grpc check reaches the pod's own addresses and what the
	// pod itself may reach, never the host's loopback (a host of
	// 127.0.0.1 is the pod's).
	dial  func(ctx context.Context, network, address string) (net.Conn, error)
	ports []corev1.ContainerPort
	env   []string
	// workingDir is where exec handlers start.
	workingDir string
}

// hookTarget returns the target of c's hooks and probes.
func (w *Worker) hookTarget(c *ctr, p Process) handlerTarget {
	t := handlerTarget{proc: p, ports: c.spec.Ports, env: c.env, workingDir: c.workingDir, dial: noSandboxDial}
	if sb := w.sandbox(); sb != nil {
		t.ip, t.dial = sb.IP(), sb.DialContext
	}
	return t
}

// noSandboxDial is the dial of a container whose pod has no sandbox.
func noSandboxDial(context.Context, string, string) (net.Conn, error) {
	return nil, errors.New("the pod has no sandbox to probe from")
}

// runHandler runs a lifecycle hook (exec, httpGet, tcpSocket, sleep).
func (w *Worker) runHandler(ctx context.Context, t handlerTarget, h *corev1.LifecycleHandler, timeout time.Duration) error {
	switch {
	case h.Sleep != nil:
		return sleepCtx(ctx, w.deps.Clock, time.Duration(h.Sleep.Seconds)*time.Second)
	case h.Exec != nil, h.HTTPGet != nil, h.TCPSocket != nil:
		return runProbeHandler(ctx, t, &corev1.ProbeHandler{Exec: h.Exec, HTTPGet: h.HTTPGet, TCPSocket: h.TCPSocket}, timeout)
	default:
		return errors.New("lifecycle handler has no action")
	}
}

// runProbeHandler runs one check; a nil error is a success. timeout 0 means
// none beyond ctx.
func runProbeHandler(ctx context.Context, t handlerTarget, h *corev1.ProbeHandler, timeout time.Duration) error {
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	switch {
	case h.Exec != nil:
		return execCheck(ctx, t, h.Exec.Command)
	case h.HTTPGet != nil:
		return httpCheck(ctx, t, h.HTTPGet)
	case h.TCPSocket != nil:
		return tcpCheck(ctx, t, h.TCPSocket)
	case h.GRPC != nil:
		return grpcCheck(ctx, t, h.GRPC)
	default:
		return errors.New("probe handler has no action")
	}
}

// execCheck runs command in the container; exit code 0 is a success.
func execCheck(ctx context.Context, t handlerTarget, command []string) error {
	var out bytes.Buffer
	code, err := t.proc.Exec(ctx, sandbox.ExecSpec{Args: command, Env: t.env, WorkingDir: t.workingDir, Stdout: &out, Stderr: &out})
	if err == nil && ctx.Err() != nil {
		err = fmt.Errorf("command %q timed out", command)
	}
	if err != nil {
		return err
	}
	if code != 0 {
		return fmt.Errorf("command %q exited with %d: %s", command, code, strings.TrimSpace(out.String()))
	}
	return nil
}

// httpCheck sends a GET from inside the pod's network namespace; 200-399
// is a success. A failure says what the kubelet's says: the status code,
// not the body.
func httpCheck(ctx context.Context, t handlerTarget, h *corev1.HTTPGetAction) error {
	addr, err := t.address(h.Host, h.Port)
	if err != nil {
		return err
	}
	scheme := strings.ToLower(string(h.Scheme))
	if scheme == "" {
		scheme = "http"
	}
	u := url.URL{Scheme: scheme, Host: addr, Path: h.Path}
	if i := strings.Index(h.Path, "?"); i >= 0 {
		u.Path, u.RawQuery = h.Path[:i], h.Path[i+1:]
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return err
	}
	req.Header.Set("User-Agent", "kube-probe/ray-operator")
	for _, hd := range h.HTTPHeaders {
		if strings.EqualFold(hd.Name, "Host") {
			req.Host = hd.Value
			continue
		}
		req.Header.Add(hd.Name, hd.Value)
	}
	resp, err := probeClient(t.dial).Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	// Read a little, as the kubelet does, so that the connection ends
	// cleanly; what a failing answer says stays out of events.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 10<<10))
	if resp.StatusCode < 200 || resp.StatusCode >= 400 {
		return fmt.Errorf("HTTP probe failed with statuscode: %d", resp.StatusCode)
	}
	return nil
}

// probeClient is the HTTP client of probes and hooks, dialing with dial:
// no keep-alive, no certificate checks, no redirects to other hosts
// followed blindly.
func probeClient(dial func(ctx context.Context, network, address string) (net.Conn, error)) *http.Client {
	return &http.Client{
		Transport: &http.Transport{
			DisableKeepAlives: true,
			DialContext:       dial,
			TLSClientConfig:   &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // as kubelet: probes do not verify certificates
		},
		CheckRedirect: probeRedirect,
	}
}

// probeRedirect follows up to 10 redirects on the same host.
func probeRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= 10 || req.URL.Host != via[0].URL.Host {
		return http.ErrUseLastResponse
	}
	return nil
}

// tcpCheck opens a TCP connection from inside the pod's network namespace.
func tcpCheck(ctx context.Context, t handlerTarget, h *corev1.TCPSocketAction) error {
	addr, err := t.address(h.Host, h.Port)
	if err != nil {
		return err
	}
	conn, err := t.dial(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	return conn.Close()
}

// address is the host:port a probe or hook reaches: host, else the pod's
// IP, and the numeric or named container port.
func (t handlerTarget) address(host string, p intstr.IntOrString) (string, error) {
	port, err := resolvePort(p, t.ports)
	if err != nil {
		return "", err
	}
	if host == "" {
		host = t.ip.String()
	}
	return net.JoinHostPort(host, strconv.Itoa(port)), nil
}

// resolvePort resolves a numeric or named container port.
func resolvePort(p intstr.IntOrString, ports []corev1.ContainerPort) (int, error) {
	if p.Type == intstr.Int {
		return p.IntValue(), nil
	}
	for _, cp := range ports {
		if cp.Name == p.StrVal {
			return int(cp.ContainerPort), nil
		}
	}
	if n, err := strconv.Atoi(p.StrVal); err == nil {
		return n, nil
	}
	return 0, fmt.Errorf("port %q not found in the container's ports", p.StrVal)
}

// sleepCtx waits d on clk, or until ctx ends.
func sleepCtx(ctx context.Context, clk clock.Clock, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := clk.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C():
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
