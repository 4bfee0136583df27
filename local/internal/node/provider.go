package node

import (
	"context"
	"errors"
	"sync"

	"github.com/virtual-kubelet/virtual-kubelet/errdefs"
	"github.com/virtual-kubelet/virtual-kubelet/node"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ray-operator/ray-operator/local/internal/kubeletapi"
	"github.com/ray-operator/ray-operator/local/internal/podworker"
)

// provider is the virtual-kubelet provider: one pod worker per pod. Its
// methods only hand work to the workers, so virtual-kubelet's queues never
// wait on a container. It also finds the pods the kubelet API acts on.
type provider struct {
	deps *podworker.Deps
	ctx  context.Context // the workers' context; canceled by Stop

	mu      sync.Mutex
	workers map[types.UID]*podworker.Worker
	notify  func(*corev1.Pod)
	all     sync.WaitGroup
}

var (
	_ node.PodLifecycleHandler = (*provider)(nil)
	_ node.PodNotifier         = (*provider)(nil)
	_ kubeletapi.Pods          = (*provider)(nil)
)

// newProvider makes a provider whose workers run until ctx ends.
func newProvider(ctx context.Context, deps *podworker.Deps) *provider {
	p := &provider{deps: deps, ctx: ctx, workers: map[types.UID]*podworker.Worker{}}
	deps.Notify = p.notifyPod
	p.all.Add(1)
	go func() {
		defer p.all.Done()
		p.housekeep(ctx)
	}()
	return p
}

// housekeep rotates the running containers' logs and measures the pods'
// local storage, each at its interval, until ctx ends: what a kubelet's
// container log manager and eviction manager do.
func (p *provider) housekeep(ctx context.Context) {
	limits := p.deps.Limits.WithDefaults()
	logs := p.deps.Clock.NewTicker(limits.LogCheckInterval)
	defer logs.Stop()
	storage := p.deps.Clock.NewTicker(limits.StorageCheckInterval)
	defer storage.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-logs.C():
			for _, w := range p.allWorkers() {
				w.RotateLogs()
			}
		case <-storage.C():
			for _, w := range p.allWorkers() {
				w.CheckStorage()
			}
		}
	}
}

// allWorkers lists the pods' workers.
func (p *provider) allWorkers() []*podworker.Worker {
	p.mu.Lock()
	defer p.mu.Unlock()
	ws := make([]*podworker.Worker, 0, len(p.workers))
	for _, w := range p.workers {
		ws = append(ws, w)
	}
	return ws
}

// NotifyPods implements node.PodNotifier.
func (p *provider) NotifyPods(_ context.Context, f func(*corev1.Pod)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.notify = f
}

// notifyPod passes a pod whose status changed on to virtual-kubelet.
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
	return p.startWorker(pod, false)
}

// startWorker starts the pod's worker, or updates the one it has; deleted
// starts it stopping the pod (see podworker.Worker.RequestDelete).
func (p *provider) startWorker(pod *corev1.Pod, deleted bool) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if w, ok := p.workers[pod.UID]; ok {
		w.Update(pod)
		if deleted {
			w.RequestDelete(pod.DeletionGracePeriodSeconds)
		}
		return nil
	}
	if p.ctx.Err() != nil {
		return errors.New("the node is stopping")
	}
	w := podworker.New(p.deps, pod)
	p.workers[pod.UID] = w
	if deleted {
		w.RequestDelete(pod.DeletionGracePeriodSeconds)
	}
	w.Start(p.ctx)
	p.all.Add(1)
	go func() {
		defer p.all.Done()
		w.Wait()
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
	w.Update(pod)
	return nil
}

// DeletePod implements node.PodLifecycleHandler: the worker stops the pod
// in the background and removes the pod object once its sandbox is gone. A
// pod with no worker was deleted while no node agent ran (the node process
// started again finds it terminating): a new worker stops what its adopted
// sandbox still runs, as a restarted kubelet does.
func (p *provider) DeletePod(_ context.Context, pod *corev1.Pod) error {
	p.mu.Lock()
	_, known := p.workers[pod.UID]
	p.mu.Unlock()
	if !known && !p.hasSandbox(pod.UID) {
		return errdefs.NotFoundf("pod %s/%s is not known to node %s", pod.Namespace, pod.Name, p.deps.Node.Name)
	}
	return p.startWorker(pod, true)
}

// sandboxLookup is a podworker.Runtime that tells which pods have a
// sandbox (hostRuntime).
type sandboxLookup interface {
	HasSandbox(uid types.UID) bool
}

// hasSandbox tells whether the runtime has a sandbox of the pod.
func (p *provider) hasSandbox(uid types.UID) bool {
	l, ok := p.deps.Runtime.(sandboxLookup)
	return ok && l.HasSandbox(uid)
}

// GetPod implements node.PodLifecycleHandler.
func (p *provider) GetPod(_ context.Context, namespace, name string) (*corev1.Pod, error) {
	w, err := p.worker(namespace, name)
	if err != nil {
		return nil, err
	}
	if pod := w.Published(); pod != nil {
		return pod, nil
	}
	return w.Pod().DeepCopy(), nil
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
	ws := p.allWorkers()
	pods := make([]*corev1.Pod, 0, len(ws))
	for _, w := range ws {
		pod, err := p.GetPod(ctx, w.Pod().Namespace, w.Pod().Name)
		if err == nil {
			pods = append(pods, pod)
		}
	}
	return pods, nil
}

// worker finds the worker of a pod by name (the newest when a pod of the
// same name is being replaced).
func (p *provider) worker(namespace, name string) (*podworker.Worker, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var found *podworker.Worker
	for _, w := range p.workers {
		pod := w.Pod()
		if pod.Namespace == namespace && pod.Name == name && (found == nil || pod.CreationTimestamp.After(found.Pod().CreationTimestamp.Time)) {
			found = w
		}
	}
	if found == nil {
		return nil, errdefs.NotFoundf("pod %s/%s is not known to node %s", namespace, name, p.deps.Node.Name)
	}
	return found, nil
}

// Pod implements kubeletapi.Pods.
func (p *provider) Pod(namespace, name string) (kubeletapi.Pod, error) {
	w, err := p.worker(namespace, name)
	if err != nil {
		return nil, err
	}
	return w, nil
}

// waitAll waits until every worker has ended.
func (p *provider) waitAll() { p.all.Wait() }

// republish passes every worker's last published status to virtual-kubelet
// again: a new pod controller (Node.Reconnect) writes it over what others
// wrote meanwhile (the node lifecycle controller's Ready=False).
func (p *provider) republish() {
	ws := p.allWorkers()
	for _, w := range ws {
		if pod := w.Published(); pod != nil {
			p.notifyPod(pod)
		}
	}
}
