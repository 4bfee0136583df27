package kubeletapi

import (
	"context"
	"io"
	"net/http"

	"k8s.io/cri-streaming/pkg/streaming/remotecommand"

	"github.com/ray-operator/ray-operator/local/internal/sandbox"
)

// serveAttach serves /attach/<ns>/<pod>/<container>.
func (s *Server) serveAttach(w http.ResponseWriter, r *http.Request) {
	opts, err := remotecommand.NewOptions(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	attach := podStreams{pods: s.Pods, namespace: r.PathValue("namespace")}
	remotecommand.ServeAttach(w, r, attach, r.PathValue("pod"), "", r.PathValue("container"),
		opts, streamIdleTimeout, streamCreationTimeout, remotecommand.SupportedStreamingProtocols)
}

// AttachContainer implements remotecommand.Attacher: the container's
// output streams to the client, and the client's input to the container's
// stdin when it has one, until either ends.
func (e podStreams) AttachContainer(ctx context.Context, podName, _, container string, in io.Reader, out, errOut io.WriteCloser, _ bool, resize <-chan remotecommand.TerminalSize) error {
	pod, err := e.pods.Pod(e.namespace, podName)
	if err != nil {
		return err
	}
	spec := sandbox.AttachSpec{Stdin: in, Resize: terminalSizes(ctx, resize)}
	spec.Stdout, spec.Stderr = writers(out, errOut)
	return pod.Attach(ctx, container, spec)
}

// writers keeps a nil io.WriteCloser a nil io.Writer (none), not a non-nil
// interface holding nil.
func writers(out, errOut io.WriteCloser) (stdout, stderr io.Writer) {
	if out != nil {
		stdout = out
	}
	if errOut != nil {
		stderr = errOut
	}
	return stdout, stderr
}
