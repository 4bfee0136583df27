package node

import (
	"context"
	"fmt"
	goruntime "runtime"
	"time"

	"github.com/virtual-kubelet/virtual-kubelet/node"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
)

// controllers are virtual-kubelet's node and pod controllers and the
// informers they read.
type controllers struct {
	nc        *node.NodeController
	pc        *node.PodController
	podInf    informers.SharedInformerFactory
	objectInf informers.SharedInformerFactory
}

// LeaseDuration is the duration of the Node's Lease; virtual-kubelet's node
// controller renews it every quarter of that (4 s), as a kubelet renews its
// 40 s Lease every 10 s.
const LeaseDuration = 16 * time.Second

// NodeMonitorGracePeriod is the node-monitor grace period (kube-controller-
// manager's --node-monitor-grace-period) that suits the node: five
// renewals of its Lease, the ratio of a kubelet's defaults (10 s renewals,
// 50 s). A control plane that gives it marks a node that stopped
// renewing Unknown after 20 s instead of 50.
const NodeMonitorGracePeriod = 5 * LeaseDuration / 4

// newControllers builds the node controller (Lease v1) and the pod
// controller of provider.
func newControllers(cfg Config, client kubernetes.Interface, prov *provider, recorder record.EventRecorder) (*controllers, error) {
	podInf := informers.NewSharedInformerFactoryWithOptions(client, time.Minute,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("spec.nodeName", cfg.NodeName).String()
		}))
	objectInf := informers.NewSharedInformerFactory(client, time.Minute)
	nodeSpec := nodeObject(cfg)
	nc, err := node.NewNodeController(node.NaiveNodeProvider{}, &nodeSpec, client.CoreV1().Nodes(),
		node.WithNodeEnableLeaseV1(client.CoordinationV1().Leases(corev1.NamespaceNodeLease), int32(LeaseDuration/time.Second)))
	if err != nil {
		return nil, fmt.Errorf("creating the node controller: %w", err)
	}
	if _, err := podInf.Core().V1().Pods().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{UpdateFunc: prov.conditionsChanged}); err != nil {
		return nil, fmt.Errorf("watching the pods' conditions: %w", err)
	}
	pc, err := node.NewPodController(node.PodControllerConfig{
		PodClient:                 statusWriter{client.CoreV1()},
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
