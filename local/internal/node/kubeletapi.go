package node

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/virtual-kubelet/virtual-kubelet/errdefs"
	"k8s.io/cri-streaming/pkg/streaming/portforward"
	"k8s.io/cri-streaming/pkg/streaming/remotecommand"
)

// The kubelet API: what the API server proxies `kubectl logs`, `exec` and
// `port-forward` to. Exec and port-forward use the kubelet's own streaming
// library (k8s.io/cri-streaming); the routes are served here rather than by
// virtual-kubelet's node/api, which does not build against
// k8s.io/apiserver v0.36+ (see startNode).

// streamIdleTimeout and streamCreationTimeout are the kubelet's defaults.
const (
	streamIdleTimeout     = 4 * time.Hour
	streamCreationTimeout = remotecommand.DefaultStreamCreationTimeout
)

// serveKubeletAPI serves the kubelet API over TLS on addr until ctx ends.
func serveKubeletAPI(ctx context.Context, addr string, tlsConfig *tls.Config, p *provider) (func(), error) {
	l, err := tls.Listen("tcp", addr, tlsConfig)
	if err != nil {
		return nil, fmt.Errorf("listening for the kubelet API on %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /containerLogs/{namespace}/{pod}/{container}", p.serveLogs)
	mux.HandleFunc("/exec/{namespace}/{pod}/{container}", p.serveExec)
	mux.HandleFunc("/portForward/{namespace}/{pod}", p.servePortForward)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 30 * time.Second, BaseContext: func(net.Listener) context.Context { return ctx }}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(l)
	}()
	return func() {
		_ = srv.Close()
		<-done
	}, nil
}

// serveLogs serves GET /containerLogs/<ns>/<pod>/<container> with the query
// parameters of the API server's log proxy.
func (p *provider) serveLogs(w http.ResponseWriter, r *http.Request) {
	opts, previous, err := parseLogQuery(r, p)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	rc, err := p.containerLogs(r.Context(), r.PathValue("namespace"), r.PathValue("pod"), r.PathValue("container"), previous, opts)
	if err != nil {
		http.Error(w, err.Error(), httpStatus(err))
		return
	}
	defer func() { _ = rc.Close() }()
	w.Header().Set("Content-Type", "text/plain")
	w.Header().Set("Transfer-Encoding", "chunked")
	_, _ = io.Copy(flushWriter{w}, rc)
}

// parseLogQuery reads tailLines, limitBytes, timestamps, follow, previous,
// sinceSeconds and sinceTime.
func parseLogQuery(r *http.Request, p *provider) (logOptions, bool, error) {
	q := r.URL.Query()
	opts := logOptions{Tail: -1}
	var err error
	intParam := func(name string, dst *int) {
		if v := q.Get(name); v != "" && err == nil {
			*dst, err = strconv.Atoi(v)
		}
	}
	intParam("tailLines", &opts.Tail)
	intParam("limitBytes", &opts.LimitBytes)
	since := 0
	intParam("sinceSeconds", &since)
	if since > 0 {
		opts.Since = p.deps.clock.Now().Add(-time.Duration(since) * time.Second)
	}
	if v := q.Get("sinceTime"); v != "" && err == nil {
		opts.Since, err = time.Parse(time.RFC3339, v)
	}
	opts.Timestamps, opts.Follow = q.Get("timestamps") == "true", q.Get("follow") == "true"
	return opts, q.Get("previous") == "true", err
}

// httpStatus maps provider errors to HTTP statuses.
func httpStatus(err error) int {
	switch {
	case errdefs.IsNotFound(err):
		return http.StatusNotFound
	case errdefs.IsInvalidInput(err):
		return http.StatusBadRequest
	case errors.Is(err, context.Canceled):
		return http.StatusRequestTimeout
	default:
		return http.StatusInternalServerError
	}
}

// flushWriter flushes after every write so that follow streams.
type flushWriter struct{ w http.ResponseWriter }

func (f flushWriter) Write(b []byte) (int, error) {
	n, err := f.w.Write(b)
	if fl, ok := f.w.(http.Flusher); ok {
		fl.Flush()
	}
	return n, err
}

// serveExec serves /exec/<ns>/<pod>/<container>?command=...
func (p *provider) serveExec(w http.ResponseWriter, r *http.Request) {
	opts, err := remotecommand.NewOptions(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	exec := podExecutor{p: p, namespace: r.PathValue("namespace")}
	remotecommand.ServeExec(w, r, exec, r.PathValue("pod"), "", r.PathValue("container"), r.URL.Query()["command"],
		opts, streamIdleTimeout, streamCreationTimeout, remotecommand.SupportedStreamingProtocols)
}

// servePortForward serves /portForward/<ns>/<pod>.
func (p *provider) servePortForward(w http.ResponseWriter, r *http.Request) {
	opts, err := portforward.NewV4Options(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	fwd := podExecutor{p: p, namespace: r.PathValue("namespace")}
	portforward.ServePortForward(w, r, fwd, r.PathValue("pod"), "", opts, streamIdleTimeout, streamCreationTimeout, portforward.SupportedProtocols)
}

// podExecutor adapts the provider to the streaming library's executor and
// port forwarder for one namespace.
type podExecutor struct {
	p         *provider
	namespace string
}

// ExecInContainer implements remotecommand.Executor.
func (e podExecutor) ExecInContainer(ctx context.Context, pod, _, container string, cmd []string, in io.Reader, out, errOut io.WriteCloser, tty bool, resize <-chan remotecommand.TerminalSize, _ time.Duration) error {
	spec := execSpec{Args: cmd, Stdin: in, TTY: tty}
	if out != nil {
		spec.Stdout = out
	}
	if errOut != nil {
		spec.Stderr = errOut
	}
	if resize != nil {
		sizes := make(chan termSize)
		go func() {
			defer close(sizes)
			for s := range resize {
				select {
				case sizes <- termSize{Width: s.Width, Height: s.Height}:
				case <-ctx.Done():
					return
				}
			}
		}()
		spec.Resize = sizes
	}
	return e.p.runInContainer(ctx, e.namespace, pod, container, spec)
}

// PortForward implements portforward.PortForwarder.
func (e podExecutor) PortForward(ctx context.Context, pod, _ string, port int32, stream io.ReadWriteCloser) error {
	return e.p.portForward(ctx, e.namespace, pod, port, stream)
}
