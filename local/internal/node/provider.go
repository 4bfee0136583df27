package node

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"

	"github.com/virtual-kubelet/virtual-kubelet/errdefs"
	"github.com/virtual-kubelet/virtual-kubelet/node"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	utilexec "k8s.io/utils/exec"
)

// provider is the virtual-kubelet provider: one pod worker per pod. Its
// methods only hand work to the workers, so virtual-kubelet's queues never
// wait on a container.
type provider struct {
	deps *workerDeps
	ctx  context.Context // the workers' context; canceled by Stop

	mu      sync.Mutex
	workers map[types.UID]*podWorker
	notify  func(*corev1.Pod)
	all     sync.WaitGroup
}

var (
	_ node.PodLifecycleHandler = (*provider)(nil)
	_ node.PodNotifier         = (*provider)(nil)
)

// newProvider makes a provider whose workers run until ctx ends.
func newProvider(ctx context.Context, deps *workerDeps) *provider {
	p := &provider{deps: deps, ctx: ctx, workers: map[types.UID]*podWorker{}}
	deps.notify = p.notifyPod
	return p
}

// NotifyPods implements node.PodNotifier.
func (p *provider) NotifyPods(_ context.Context, f func(*corev1.Pod)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.notify = f
}

func (p *provider) notifyPod(pod *corev1.Pod) {
	p.mu.Lock()
	f := p.notify
	p.mu.Unlock()
	if f != nil {
		f(pod)
	}
}

// CreatePod implements node.PodLifecycleHandler: it starts the pod's worker.
func (p *provider) CreatePod(_ context.Context, pod *corev1.Pod) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if w, ok := p.workers[pod.UID]; ok {
		w.update(pod)
		return nil
	}
	if p.ctx.Err() != nil {
		return errors.New("the node is stopping")
	}
	w := newPodWorker(p.deps, pod)
	p.workers[pod.UID] = w
	w.start(p.ctx)
	p.all.Add(1)
	go func() {
		defer p.all.Done()
		w.wait()
		p.mu.Lock()
		delete(p.workers, pod.UID)
		p.mu.Unlock()
	}()
	return nil
}

// UpdatePod implements node.PodLifecycleHandler.
func (p *provider) UpdatePod(_ context.Context, pod *corev1.Pod) error {
	w, err := p.worker(pod.Namespace, pod.Name)
	if err != nil {
		return err
	}
	w.update(pod)
	return nil
}

// DeletePod implements node.PodLifecycleHandler: the worker stops the pod
// in the background and removes the pod object once its sandbox is gone.
func (p *provider) DeletePod(_ context.Context, pod *corev1.Pod) error {
	w, err := p.worker(pod.Namespace, pod.Name)
	if err != nil {
		return err
	}
	w.requestDelete(pod.DeletionGracePeriodSeconds)
	return nil
}

// GetPod implements node.PodLifecycleHandler.
func (p *provider) GetPod(_ context.Context, namespace, name string) (*corev1.Pod, error) {
	w, err := p.worker(namespace, name)
	if err != nil {
		return nil, err
	}
	if pod := w.published(); pod != nil {
		return pod, nil
	}
	return w.currentPod().DeepCopy(), nil
}

// GetPodStatus implements node.PodLifecycleHandler.
func (p *provider) GetPodStatus(ctx context.Context, namespace, name string) (*corev1.PodStatus, error) {
	pod, err := p.GetPod(ctx, namespace, name)
	if err != nil {
		return nil, err
	}
	return &pod.Status, nil
}

// GetPods implements node.PodLifecycleHandler.
func (p *provider) GetPods(ctx context.Context) ([]*corev1.Pod, error) {
	p.mu.Lock()
	ws := make([]*podWorker, 0, len(p.workers))
	for _, w := range p.workers {
		ws = append(ws, w)
	}
	p.mu.Unlock()
	pods := make([]*corev1.Pod, 0, len(ws))
	for _, w := range ws {
		pod, err := p.GetPod(ctx, w.currentPod().Namespace, w.currentPod().Name)
		if err == nil {
			pods = append(pods, pod)
		}
	}
	return pods, nil
}

// worker finds the worker of a pod by name (the newest when a pod of the
// same name is being replaced).
func (p *provider) worker(namespace, name string) (*podWorker, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var found *podWorker
	for _, w := range p.workers {
		pod := w.currentPod()
		if pod.Namespace == namespace && pod.Name == name && (found == nil || pod.CreationTimestamp.After(found.currentPod().CreationTimestamp.Time)) {
			found = w
		}
	}
	if found == nil {
		return nil, errdefs.NotFoundf("pod %s/%s is not known to node %s", namespace, name, p.deps.node.Name)
	}
	return found, nil
}

// waitAll waits until every worker has ended.
func (p *provider) waitAll() { p.all.Wait() }

// containerLogs streams a container's log (kubectl logs); previous selects
// the attempt before the current one.
func (p *provider) containerLogs(ctx context.Context, namespace, podName, containerName string, previous bool, opts logOptions) (io.ReadCloser, error) {
	w, err := p.worker(namespace, podName)
	if err != nil {
		return nil, err
	}
	ref, err := w.logRef(containerName, previous)
	if err != nil {
		return nil, err
	}
	pr, pw := io.Pipe()
	go func() {
		pw.CloseWithError(readLog(ctx, ref.path, opts, ref.done, p.deps.clock, pw))
	}()
	return pr, nil
}

// runInContainer runs a command in a running container (kubectl exec); a
// non-zero exit is an error carrying the code, worded as kubectl shows it.
func (p *provider) runInContainer(ctx context.Context, namespace, podName, containerName string, spec execSpec) error {
	w, err := p.worker(namespace, podName)
	if err != nil {
		return err
	}
	proc, env, err := w.runningProcess(containerName)
	if err != nil {
		return err
	}
	spec.Env = env
	code, err := proc.Exec(ctx, spec)
	if err != nil {
		return err
	}
	if code != 0 {
		return utilexec.CodeExitError{Err: fmt.Errorf("command terminated with exit code %d", code), Code: code}
	}
	return nil
}

// portForward connects stream to
// localhost:port inside the pod's network namespace.
func (p *provider) portForward(ctx context.Context, namespace, podName string, port int32, stream io.ReadWriteCloser) error {
	defer func() { _ = stream.Close() }()
	w, err := p.worker(namespace, podName)
	if err != nil {
		return err
	}
	sb := w.sandbox()
	if sb == nil {
		return errdefs.InvalidInput("the pod's sandbox does not exist yet")
	}
	conn, err := sb.DialContext(ctx, "tcp", net.JoinHostPort("localhost", strconv.Itoa(int(port))))
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

func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	}
}
