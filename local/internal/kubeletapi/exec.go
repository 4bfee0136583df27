package kubeletapi

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	"k8s.io/cri-streaming/pkg/streaming/remotecommand"
	utilexec "k8s.io/utils/exec"

	"github.com/ray-operator/ray-operator/local/internal/sandbox"
)

// serveExec serves /exec/<ns>/<pod>/<container>?command=...
func (s *Server) serveExec(w http.ResponseWriter, r *http.Request) {
	opts, err := remotecommand.NewOptions(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	exec := podStreams{pods: s.Pods, namespace: r.PathValue("namespace")}
	remotecommand.ServeExec(w, r, exec, r.PathValue("pod"), "", r.PathValue("container"), r.URL.Query()["command"],
		opts, streamIdleTimeout, streamCreationTimeout, remotecommand.SupportedStreamingProtocols)
}

// podStreams adapts Pods to the streaming library's executor and port
// forwarder for one namespace.
type podStreams struct {
	pods      Pods
	namespace string
}

// ExecInContainer implements remotecommand.Executor: a non-zero exit is an
// error carrying the code, worded as kubectl shows it.
func (e podStreams) ExecInContainer(ctx context.Context, podName, _, container string, cmd []string, in io.Reader, out, errOut io.WriteCloser, tty bool, resize <-chan remotecommand.TerminalSize, _ time.Duration) error {
	pod, err := e.pods.Pod(e.namespace, podName)
	if err != nil {
		return err
	}
	spec := sandbox.ExecSpec{Args: cmd, Stdin: in, TTY: tty, Resize: terminalSizes(ctx, resize)}
	spec.Stdout, spec.Stderr = writers(out, errOut)
	code, err := pod.Exec(ctx, container, spec)
	if err != nil {
		return err
	}
	if code != 0 {
		return utilexec.CodeExitError{Err: fmt.Errorf("command terminated with exit code %d", code), Code: code}
	}
	return nil
}

// terminalSizes passes the streaming library's resize events on to the
// sandbox until ctx ends; nil when there are none.
func terminalSizes(ctx context.Context, resize <-chan remotecommand.TerminalSize) <-chan sandbox.TerminalSize {
	if resize == nil {
		return nil
	}
	sizes := make(chan sandbox.TerminalSize)
	go func() {
		defer close(sizes)
		for s := range resize {
			select {
			case sizes <- sandbox.TerminalSize{Width: s.Width, Height: s.Height}:
			case <-ctx.Done():
				return
			}
		}
	}()
	return sizes
}
