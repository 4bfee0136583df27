package kubeletapi

import (
	"context"
	"io"
	"net"
	"net/http"
	"strconv"

	"k8s.io/cri-streaming/pkg/streaming/portforward"
)

// servePortForward serves /portForward/<ns>/<pod>.
func (s *Server) servePortForward(w http.ResponseWriter, r *http.Request) {
	opts, err := portforward.NewV4Options(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	fwd := podStreams{pods: s.Pods, namespace: r.PathValue("namespace")}
	portforward.ServePortForward(w, r, fwd, r.PathValue("pod"), "", opts, streamIdleTimeout, streamCreationTimeout, portforward.SupportedProtocols)
}

// PortForward implements portforward.PortForwarder: it connects stream to
// localhost:port inside the pod's network namespace.
func (e podStreams) PortForward(ctx context.Context, podName, _ string, port int32, stream io.ReadWriteCloser) error {
	defer func() { _ = stream.Close() }()
	pod, err := e.pods.Pod(e.namespace, podName)
	if err != nil {
		return err
	}
	conn, err := pod.DialContext(ctx, "tcp", net.JoinHostPort("localhost", strconv.Itoa(int(port))))
	if err != nil {
		return err
	}
	defer func() { _ = conn.Close() }()
	errc := make(chan error, 2)
	go func() { _, err := io.Copy(conn, stream); closeWrite(conn); errc <- err }()
	go func() { _, err := io.Copy(stream, conn); errc <- err }()
	select {
	case err = <-errc:
	case <-ctx.Done():
	}
	return err
}

// closeWrite half-closes c so that the pod sees the client's end of input.
func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	}
}
