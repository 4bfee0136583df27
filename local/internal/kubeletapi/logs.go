package kubeletapi

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/ray-operator/ray-operator/local/internal/containerlog"
)

// serveLogs serves GET /containerLogs/<ns>/<pod>/<container> with the query
// parameters of the API server's log proxy.
func (s *Server) serveLogs(w http.ResponseWriter, r *http.Request) {
	opts, previous, err := s.parseLogQuery(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	rc, err := s.containerLogs(r.Context(), r.PathValue("namespace"), r.PathValue("pod"), r.PathValue("container"), previous, opts)
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
func (s *Server) parseLogQuery(r *http.Request) (containerlog.Options, bool, error) {
	q := r.URL.Query()
	opts := containerlog.Options{Tail: -1}
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
		opts.Since = s.Clock.Now().Add(-time.Duration(since) * time.Second)
	}
	if v := q.Get("sinceTime"); v != "" && err == nil {
		opts.Since, err = time.Parse(time.RFC3339, v)
	}
	opts.Timestamps, opts.Follow = q.Get("timestamps") == "true", q.Get("follow") == "true"
	return opts, q.Get("previous") == "true", err
}

// containerLogs streams a container's log (kubectl logs); previous selects
// the attempt before the current one.
func (s *Server) containerLogs(ctx context.Context, namespace, podName, containerName string, previous bool, opts containerlog.Options) (io.ReadCloser, error) {
	pod, err := s.Pods.Pod(namespace, podName)
	if err != nil {
		return nil, err
	}
	path, ended, err := pod.LogFile(containerName, previous)
	if err != nil {
		return nil, err
	}
	pr, pw := io.Pipe()
	go func() {
		pw.CloseWithError(containerlog.Read(ctx, path, opts, ended, s.Clock, pw))
	}()
	return pr, nil
}
