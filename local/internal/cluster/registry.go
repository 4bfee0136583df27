package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/netip"
	"os"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
)

// DefaultRegistry is where `make run` serves the cluster's image registry.
var DefaultRegistry = netip.MustParseAddrPort("127.0.0.1:5001")

// imageRegistry is the cluster's image registry (go-containerregistry's
// in-process registry): what `kind load` is to kind. It listens on a
// loopback address, which the host and the node (a process of the host)
// reach and the pods (in network namespaces of their own) do not; images
// pushed there (`make push IMAGE=127.0.0.1:5001/...`) run on the node by
// that reference. Blobs are kept on disk; manifests live as long as the
// cluster, whose state starts afresh every run.
type imageRegistry struct {
	srv  *http.Server
	done chan error
}

// startRegistry serves a registry at addr with blobs below blobDir.
func startRegistry(addr netip.AddrPort, blobDir string) (*imageRegistry, error) {
	if !addr.Addr().IsLoopback() {
		return nil, fmt.Errorf("image registry address %s: must be a loopback address, which only the host and the node reach", addr)
	}
	if err := os.MkdirAll(blobDir, 0o700); err != nil {
		return nil, fmt.Errorf("image registry: %w", err)
	}
	ln, err := net.Listen("tcp", addr.String())
	if err != nil {
		return nil, fmt.Errorf("image registry: %w", err)
	}
	h := registry.New(registry.WithBlobHandler(registry.NewDiskBlobHandler(blobDir)), registry.Logger(log.New(io.Discard, "", 0)))
	r := &imageRegistry{srv: &http.Server{Handler: h, ReadHeaderTimeout: 30 * time.Second}, done: make(chan error, 1)}
	go func() { r.done <- r.srv.Serve(ln) }()
	return r, nil
}

// close stops serving, and waits for the server to end.
func (r *imageRegistry) close(ctx context.Context) error {
	err := r.srv.Shutdown(ctx)
	if serr := <-r.done; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	return err
}
