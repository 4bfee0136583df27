package kubeletapi

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/virtual-kubelet/virtual-kubelet/errdefs"
	"k8s.io/cri-streaming/pkg/streaming/remotecommand"
	"k8s.io/utils/clock"

	"github.com/ray-operator/ray-operator/local/internal/sandbox"
)

// The routes are served here rather than by virtual-kubelet's node/api,
// which does not build against k8s.io/apiserver v0.36+ (see startNode in
// package node).

// streamIdleTimeout and streamCreationTimeout are the kubelet's defaults.
const (
	streamIdleTimeout     = 4 * time.Hour
	streamCreationTimeout = remotecommand.DefaultStreamCreationTimeout
)

// Pods finds the pods of the node by name.
type Pods interface {
	// Pod returns the newest pod of that name on the node; an errdefs
	// NotFound error when there is none.
	Pod(namespace, name string) (Pod, error)
}

// Pod is what the API acts on in one pod. Errors are virtual-kubelet
// errdefs values (NotFound, InvalidInput) where the request is at fault.
type Pod interface {
	// LogFile locates the log of the current (or previous) attempt of
	// container; ended is closed once that attempt has ended.
	LogFile(container string, previous bool) (path string, ended <-chan struct{}, err error)
	// Exec runs spec in the running container and returns its exit code.
	Exec(ctx context.Context, container string, spec sandbox.ExecSpec) (int, error)
	// Attach streams the running container's output to a client, and the
	// client's input to the container's stdin, until either ends.
	Attach(ctx context.Context, container string, spec sandbox.AttachSpec) error
	// DialContext connects from inside the pod's network namespace.
	DialContext(ctx context.Context, network, address string) (net.Conn, error)
}

// Server serves the kubelet API for Pods.
type Server struct {
	// NodeName names the node in /stats/summary.
	NodeName string
	// Pods are the node's pods.
	Pods Pods
	// Usage supplies the resource figures of the node and its pods.
	Usage Usage
	// Clock reads sinceSeconds, paces following a log and stamps resource
	// figures.
	Clock clock.WithTicker
}

// Serve serves the API over TLS on addr until ctx ends or stop is called;
// stop returns once the server has stopped.
func (s *Server) Serve(ctx context.Context, addr string, tlsConfig *tls.Config) (stop func(), err error) {
	l, err := tls.Listen("tcp", addr, tlsConfig)
	if err != nil {
		return nil, fmt.Errorf("listening for the kubelet API on %s: %w", addr, err)
	}
	srv := &http.Server{Handler: s.routes(), ReadHeaderTimeout: 30 * time.Second, BaseContext: func(net.Listener) context.Context { return ctx }}
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

// routes are the API's handlers.
func (s *Server) routes() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /containerLogs/{namespace}/{pod}/{container}", s.serveLogs)
	mux.HandleFunc("/exec/{namespace}/{pod}/{container}", s.serveExec)
	mux.HandleFunc("/attach/{namespace}/{pod}/{container}", s.serveAttach)
	mux.HandleFunc("/portForward/{namespace}/{pod}", s.servePortForward)
	mux.HandleFunc("GET /metrics/resource", s.serveResourceMetrics)
	mux.HandleFunc("GET /stats/summary", s.serveSummary)
	return mux
}

// httpStatus maps the errors of Pods to HTTP statuses.
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

// Write implements io.Writer.
func (f flushWriter) Write(b []byte) (int, error) {
	n, err := f.w.Write(b)
	if fl, ok := f.w.(http.Flusher); ok {
		fl.Flush()
	}
	return n, err
}
