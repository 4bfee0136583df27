package node

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	goruntime "runtime"
	"sync"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"

	"github.com/ray-operator/ray-operator/local/internal/hostaccess"
	"github.com/ray-operator/ray-operator/local/internal/kubeletapi"
	"github.com/ray-operator/ray-operator/local/internal/localpv"
	"github.com/ray-operator/ray-operator/local/internal/podworker"
)

// Node is a running local node.
type Node struct {
	name     string
	cfg      Config
	client   kubernetes.Interface
	prov     *provider
	events   record.EventBroadcaster
	recorder record.EventRecorder
	tls      *tls.Config
	log      logr.Logger
	in       podworker.Inputs
	access   hostaccess.Policy

	stopWorkers context.CancelFunc
	// stopVolumes stops the volume provisioner, which runs as long as the
	// node (a cluster's provisioner is no part of its kubelets);
	// volumesDone closes once it stopped, nil without a volume directory.
	stopVolumes context.CancelFunc
	volumesDone <-chan struct{}
	// connMu orders Disconnect, Reconnect and Stop; conn is nil while the
	// node is disconnected.
	connMu   sync.Mutex
	conn     *connection
	stopped  bool // by Stop; under connMu
	stopOnce sync.Once
	stopErr  error
	done     chan struct{}
}

// startNode registers the node and runs pods with rt and in, admitting
// those that access allows; cfg has its defaults. It returns once the node
// is Ready in the API.
//
// It wires virtual-kubelet's node controller (Lease v1) and pod controller
// itself rather than through nodeutil: nodeutil and node/api of
// virtual-kubelet v1.12.0 import k8s.io/apiserver/pkg/util/wsstream, which
// k8s.io/apiserver v0.36+ no longer has, so they do not build against this
// module's Kubernetes libraries (v0.37).
func startNode(ctx context.Context, cfg Config, client kubernetes.Interface, rt podworker.Runtime, in podworker.Inputs, access hostaccess.Policy) (*Node, error) {
	tlsConfig, err := kubeletapi.ServingTLS(cfg.ListenAddress.Addr(), cfg.ClientCA)
	if err != nil {
		return nil, err
	}
	broadcaster := record.NewBroadcaster()
	recorder := broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "kubelet", Host: cfg.NodeName})
	workerCtx, stopWorkers := context.WithCancel(context.WithoutCancel(ctx))
	n := &Node{
		name: cfg.NodeName, cfg: cfg, client: client, events: broadcaster, recorder: recorder, tls: tlsConfig, log: cfg.Log,
		in: in, access: access,
		prov: newProvider(workerCtx, workerDeps(cfg, client, recorder, rt, in, access)), stopWorkers: stopWorkers, done: make(chan struct{}),
	}
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: client.CoreV1().Events("")})
	if err := n.startVolumes(ctx); err != nil {
		return nil, errors.Join(err, n.Stop(context.WithoutCancel(ctx)))
	}
	n.connMu.Lock()
	n.conn, err = n.connect(ctx)
	n.connMu.Unlock()
	if err != nil {
		return nil, errors.Join(err, n.Stop(context.WithoutCancel(ctx)))
	}
	go n.stopWhenDone(ctx)
	return n, nil
}

// workerDeps are what the node's pod workers share.
func workerDeps(cfg Config, client kubernetes.Interface, recorder record.EventRecorder, rt podworker.Runtime, in podworker.Inputs, access hostaccess.Policy) *podworker.Deps {
	return &podworker.Deps{
		Runtime: rt, Inputs: in, Clock: cfg.Clock, Recorder: recorder, Log: cfg.Log, HostAccess: access,
		Node: podworker.NodeInfo{
			Name: cfg.NodeName, HostIP: cfg.ListenAddress.Addr(), Allocatable: cfg.Capacity,
			ClusterDNS: cfg.ClusterDNS, ClusterDomain: cfg.ClusterDomain, KubernetesService: cfg.KubernetesService,
			SeccompDir: cfg.SeccompDir,
		},
		Finalize:      removePod(client, cfg.Log),
		SyncFrequency: cfg.SyncFrequency,
		Limits:        cfg.Limits,
	}
}

// startVolumes starts the volume provisioner when the node has a volume
// directory.
func (n *Node) startVolumes(ctx context.Context) error {
	volumesCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	n.stopVolumes = stop
	if n.cfg.VolumeDir == "" {
		return nil
	}
	p := &localpv.Provisioner{Dir: n.cfg.VolumeDir, ImageDir: n.cfg.VolumeImageDir, NodeName: n.cfg.NodeName}
	done, err := localpv.Start(volumesCtx, n.client, p, n.cfg.Log.WithName("volumes"))
	n.volumesDone = done
	return err
}

// stopWhenDone stops the node when ctx ends.
func (n *Node) stopWhenDone(ctx context.Context) {
	select {
	case <-ctx.Done():
	case <-n.done:
		return
	}
	_ = n.Stop(context.WithoutCancel(ctx))
}

// waitReady waits for virtual-kubelet, then for the Node to be Ready in the
// API.
func (n *Node) waitReady(ctx context.Context, ctrls *controllers) error {
	select {
	case <-ctrls.nc.Ready():
	case <-ctrls.pc.Done():
		return fmt.Errorf("pod controller stopped: %w", ctrls.pc.Err())
	case <-ctx.Done():
		return ctx.Err()
	}
	w, err := n.client.CoreV1().Nodes().Watch(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", n.name).String()})
	if err != nil {
		return fmt.Errorf("watching node %s: %w", n.name, err)
	}
	defer w.Stop()
	if got, err := n.client.CoreV1().Nodes().Get(ctx, n.name, metav1.GetOptions{}); err == nil && nodeReady(got) {
		return nil
	}
	for ev := range w.ResultChan() {
		if node, ok := ev.Object.(*corev1.Node); ok && nodeReady(node) {
			return nil
		}
	}
	return fmt.Errorf("node %s: watch ended before it was Ready: %w", n.name, ctx.Err())
}

func nodeReady(node *corev1.Node) bool {
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// Stop stops every pod as deletion would (preStop, SIGTERM, grace,
// SIGKILL), destroys their sandboxes, stops the node's controllers and
// deletes the Node object. It is safe to call more than once.
func (n *Node) Stop(ctx context.Context) error {
	n.stopOnce.Do(func() {
		n.connMu.Lock()
		n.stopped = true // no Reconnect from now on
		prov, stopWorkers := n.prov, n.stopWorkers
		n.connMu.Unlock()
		stopWorkers()
		prov.waitAll()
		n.connMu.Lock()
		if n.conn != nil {
			n.conn.close()
			n.conn = nil
		}
		n.connMu.Unlock()
		if n.stopVolumes != nil {
			n.stopVolumes()
		}
		if n.volumesDone != nil {
			<-n.volumesDone
		}
		n.events.Shutdown()
		err := n.client.CoreV1().Nodes().Delete(ctx, n.name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			n.stopErr = fmt.Errorf("deleting node %s: %w", n.name, err)
		}
		close(n.done)
	})
	<-n.done
	return n.stopErr
}

// Done is closed once the node has stopped.
func (n *Node) Done() <-chan struct{} { return n.done }

// removePod deletes a pod object once its containers stopped and its
// sandbox is gone, as a kubelet's final delete (grace 0, same UID).
func removePod(client kubernetes.Interface, log logr.Logger) func(context.Context, *corev1.Pod) {
	return func(ctx context.Context, pod *corev1.Pod) {
		opts := metav1.DeleteOptions{GracePeriodSeconds: new(int64), Preconditions: metav1.NewUIDPreconditions(string(pod.UID))}
		err := client.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, opts)
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			log.Error(err, "Removing the deleted pod", "pod", pod.Namespace+"/"+pod.Name)
		}
	}
}

// nodeObject is the Node this agent registers.
func nodeObject(cfg Config) corev1.Node {
	now := metav1.Now()
	cond := func(t corev1.NodeConditionType, st corev1.ConditionStatus, reason, msg string) corev1.NodeCondition {
		return corev1.NodeCondition{Type: t, Status: st, Reason: reason, Message: msg, LastHeartbeatTime: now, LastTransitionTime: now}
	}
	ip := cfg.ListenAddress.Addr().String()
	var annotations map[string]string
	if cfg.CapacityNote != "" {
		annotations = map[string]string{CapacityAnnotation: cfg.CapacityNote}
	}
	return corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        cfg.NodeName,
			Annotations: annotations,
			Labels: map[string]string{
				corev1.LabelHostname:   cfg.NodeName,
				corev1.LabelOSStable:   "linux",
				corev1.LabelArchStable: goruntime.GOARCH,
			},
		},
		Status: corev1.NodeStatus{
			Phase:       corev1.NodeRunning,
			Capacity:    cfg.Capacity,
			Allocatable: cfg.Capacity,
			Addresses: []corev1.NodeAddress{
				{Type: corev1.NodeInternalIP, Address: ip},
				{Type: corev1.NodeHostName, Address: cfg.NodeName},
			},
			DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: int32(cfg.ListenAddress.Port())}},
			NodeInfo: corev1.NodeSystemInfo{
				OperatingSystem: "linux", Architecture: goruntime.GOARCH,
				KubeletVersion: "v0.0.0-localnode", ContainerRuntimeVersion: "runc",
			},
			Conditions: []corev1.NodeCondition{
				cond(corev1.NodeReady, corev1.ConditionTrue, "KubeletReady", "kubelet is posting ready status"),
				cond(corev1.NodeMemoryPressure, corev1.ConditionFalse, "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
				cond(corev1.NodeDiskPressure, corev1.ConditionFalse, "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
				cond(corev1.NodePIDPressure, corev1.ConditionFalse, "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
			},
		},
	}
}
