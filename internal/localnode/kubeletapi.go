package localnode

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
)

// The kubelet API: what the API server proxies `kubectl logs` to. It is
// served here rather than by virtual-kubelet's node/api, which does not
// build against k8s.io/apiserver v0.36+ (see startNode).

// serveKubeletAPI serves the kubelet API over TLS on addr until ctx ends.
func serveKubeletAPI(ctx context.Context, addr string, tlsConfig *tls.Config, p *provider) (func(), error) {
	l, err := tls.Listen("tcp", addr, tlsConfig)
	if err != nil {
		return nil, fmt.Errorf("listening for the kubelet API on %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /containerLogs/{namespace}/{pod}/{container}", p.serveLogs)
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
