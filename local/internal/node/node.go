// Package localnode is a Kubernetes node agent built on virtual-kubelet
// whose pods run as real processes: each pod in its own network namespace
// (package sandbox), each container started by runc, with the images,
// argv, environment and volumes package podinputs resolves. Node
// registration, leases, pod-status updates and the kubelet API (logs, exec,
// port-forward) are virtual-kubelet's; this package supplies the provider,
// a pod worker per pod that runs the kubelet's lifecycle (init containers,
// sidecars, restarts with back-off, probes, hooks, graceful deletion).
package node

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/netip"
	goruntime "runtime"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/virtual-kubelet/virtual-kubelet/node"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/cert"
	"k8s.io/utils/clock"
)

// Node is a running local node.
type Node struct {
	name   string
	client kubernetes.Interface
	ctrls  *controllers
	prov   *provider
	events record.EventBroadcaster
	log    logr.Logger

	stopWorkers context.CancelFunc
	stopVK      context.CancelFunc
	stopHTTP    func()
	stopOnce    sync.Once
	stopErr     error
	done        chan struct{}
}

// nodeSettings are Config's settings after defaults, without the sandbox
// and podinputs handles (see Start).
type nodeSettings struct {
	NodeName          string
	Client            kubernetes.Interface
	ClusterDNS        []string
	ClusterDomain     string
	KubernetesService netip.AddrPort
	ListenAddress     netip.AddrPort
	ClientCA          []byte
	Capacity          corev1.ResourceList
	Clock             clock.WithTicker
	Log               logr.Logger
}

// startNode registers the node and runs pods with rt and in. It returns
// once the node is Ready in the API.
//
// It wires virtual-kubelet's node controller (Lease v1) and pod controller
// itself rather than through nodeutil: nodeutil and node/api of
// virtual-kubelet v1.12.0 import k8s.io/apiserver/pkg/util/wsstream, which
// k8s.io/apiserver v0.36+ no longer has, so they do not build against this
// module's Kubernetes libraries (v0.37).
func startNode(ctx context.Context, s nodeSettings, rt runtime, in inputs) (*Node, error) {
	tlsConfig, err := servingTLS(s.ListenAddress.Addr(), s.ClientCA)
	if err != nil {
		return nil, err
	}
	broadcaster := record.NewBroadcaster()
	recorder := broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "kubelet", Host: s.NodeName})
	deps := &workerDeps{
		runtime: rt, inputs: in, clock: s.Clock, recorder: recorder, log: s.Log,
		node: nodeInfo{
			Name: s.NodeName, HostIP: s.ListenAddress.Addr(), Allocatable: s.Capacity,
			ClusterDNS: s.ClusterDNS, ClusterDomain: s.ClusterDomain, KubernetesService: s.KubernetesService,
		},
		finalize: removePod(s.Client, s.Log),
	}
	workerCtx, stopWorkers := context.WithCancel(context.WithoutCancel(ctx))
	prov := newProvider(workerCtx, deps)
	ctrls, err := newControllers(s, prov, recorder)
	if err != nil {
		stopWorkers()
		return nil, err
	}
	n := &Node{name: s.NodeName, client: s.Client, ctrls: ctrls, prov: prov, events: broadcaster, log: s.Log, stopWorkers: stopWorkers, done: make(chan struct{})}
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: s.Client.CoreV1().Events("")})
	vkCtx, stopVK := context.WithCancel(context.WithoutCancel(ctx))
	n.stopVK = stopVK
	if n.stopHTTP, err = serveKubeletAPI(vkCtx, s.ListenAddress.String(), tlsConfig, prov); err != nil {
		stopVK()
		stopWorkers()
		broadcaster.Shutdown()
		return nil, err
	}
	ctrls.run(vkCtx)
	if err := n.waitReady(ctx); err != nil {
		return nil, errors.Join(err, n.Stop(context.WithoutCancel(ctx)))
	}
	go func() {
		select {
		case <-ctx.Done():
		case <-ctrls.nc.Done():
		case <-ctrls.pc.Done():
		case <-n.done:
			return
		}
		_ = n.Stop(context.WithoutCancel(ctx))
	}()
	return n, nil
}

// controllers are virtual-kubelet's node and pod controllers and the
// informers they read.
type controllers struct {
	nc        *node.NodeController
	pc        *node.PodController
	podInf    informers.SharedInformerFactory
	objectInf informers.SharedInformerFactory
}

// newControllers builds the node controller (Lease v1) and the pod
// controller of provider.
func newControllers(s nodeSettings, prov *provider, recorder record.EventRecorder) (*controllers, error) {
	podInf := informers.NewSharedInformerFactoryWithOptions(s.Client, time.Minute,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("spec.nodeName", s.NodeName).String()
		}))
	objectInf := informers.NewSharedInformerFactory(s.Client, time.Minute)
	nodeSpec := nodeObject(s)
	nc, err := node.NewNodeController(node.NaiveNodeProvider{}, &nodeSpec, s.Client.CoreV1().Nodes(),
		node.WithNodeEnableLeaseV1(s.Client.CoordinationV1().Leases(corev1.NamespaceNodeLease), node.DefaultLeaseDuration))
	if err != nil {
		return nil, fmt.Errorf("creating the node controller: %w", err)
	}
	pc, err := node.NewPodController(node.PodControllerConfig{
		PodClient:                 s.Client.CoreV1(),
		PodInformer:               podInf.Core().V1().Pods(),
		EventRecorder:             recorder,
		Provider:                  prov,
		ConfigMapInformer:         objectInf.Core().V1().ConfigMaps(),
		SecretInformer:            objectInf.Core().V1().Secrets(),
		ServiceInformer:           objectInf.Core().V1().Services(),
		SkipDownwardAPIResolution: true, // podinputs resolves the environment
	})
	if err != nil {
		return nil, fmt.Errorf("creating the pod controller: %w", err)
	}
	return &controllers{nc: nc, pc: pc, podInf: podInf, objectInf: objectInf}, nil
}

// run starts the informers and controllers until ctx ends.
func (c *controllers) run(ctx context.Context) {
	c.podInf.Start(ctx.Done())
	c.objectInf.Start(ctx.Done())
	go func() { _ = c.pc.Run(ctx, max(goruntime.NumCPU(), 4)) }()
	go func() {
		select {
		case <-c.pc.Ready():
			_ = c.nc.Run(ctx)
		case <-ctx.Done():
		}
	}()
}

// wait blocks until the controllers have stopped.
func (c *controllers) wait() {
	<-c.pc.Done()
	select {
	case <-c.nc.Done():
	case <-c.nc.Ready(): // started: wait for it
		<-c.nc.Done()
	default: // never started
	}
	c.podInf.Shutdown()
	c.objectInf.Shutdown()
}

// waitReady waits for virtual-kubelet, then for the Node to be Ready in the
// API.
func (n *Node) waitReady(ctx context.Context) error {
	select {
	case <-n.ctrls.nc.Ready():
	case <-n.ctrls.pc.Done():
		return fmt.Errorf("pod controller stopped: %w", n.ctrls.pc.Err())
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
		n.stopWorkers()
		n.prov.waitAll()
		n.stopHTTP()
		n.stopVK()
		n.ctrls.wait()
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
func nodeObject(s nodeSettings) corev1.Node {
	now := metav1.Now()
	cond := func(t corev1.NodeConditionType, st corev1.ConditionStatus, reason, msg string) corev1.NodeCondition {
		return corev1.NodeCondition{Type: t, Status: st, Reason: reason, Message: msg, LastHeartbeatTime: now, LastTransitionTime: now}
	}
	ip := s.ListenAddress.Addr().String()
	return corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: s.NodeName,
			Labels: map[string]string{
				corev1.LabelHostname:   s.NodeName,
				corev1.LabelOSStable:   "linux",
				corev1.LabelArchStable: goruntime.GOARCH,
			},
		},
		Status: corev1.NodeStatus{
			Phase:       corev1.NodeRunning,
			Capacity:    s.Capacity,
			Allocatable: s.Capacity,
			Addresses: []corev1.NodeAddress{
				{Type: corev1.NodeInternalIP, Address: ip},
				{Type: corev1.NodeHostName, Address: s.NodeName},
			},
			DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: int32(s.ListenAddress.Port())}},
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

// servingTLS makes the kubelet API's TLS configuration: a self-signed
// certificate for ip; client certificates required and verified against
// clientCA when given.
func servingTLS(ip netip.Addr, clientCA []byte) (*tls.Config, error) {
	certPEM, keyPEM, err := cert.GenerateSelfSignedCertKey(ip.String(), []net.IP{ip.AsSlice()}, nil)
	if err != nil {
		return nil, fmt.Errorf("generating the kubelet serving certificate: %w", err)
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, err
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{pair}}
	if len(clientCA) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(clientCA) {
			return nil, errors.New("ClientCA holds no PEM certificate")
		}
		cfg.ClientCAs, cfg.ClientAuth = pool, tls.RequireAndVerifyClientCert
	}
	return cfg, nil
}
