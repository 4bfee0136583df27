package netpolicy

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/kube-network-policies/pkg/networkpolicy"
)

// Defaults of Config.
const (
	// DefaultQueueID is the nfqueue the local cluster's enforcer reads.
	DefaultQueueID = 2470
	// DefaultTable is the ip table of the rules that send packets to the
	// queue (installDataplane). kube-network-policies' own table (inet) is
	// named after it with "-knp" appended.
	DefaultTable = "ray-local-netpol"
)

// startTimeout bounds the wait for the enforcer's first sync.
const startTimeout = time.Minute

// Config configures Start.
type Config struct {
	// RESTConfig reaches the API server; NodeName is the node whose Pods
	// are enforced.
	RESTConfig *rest.Config
	NodeName   string
	// Bridge and PodCIDR are the pod network's (sandbox.Host): new
	// connections from PodCIDR arriving on Bridge for the node itself are
	// judged too.
	Bridge  string
	PodCIDR netip.Prefix
	// QueueID and Table default to DefaultQueueID and DefaultTable. Two
	// enforcers on one machine need different ones.
	QueueID uint16
	Table   string
	// Log receives what the enforcer does; kube-network-policies itself
	// logs through klog.
	Log logr.Logger
}

// Enforcer is a running kube-network-policies controller.
type Enforcer struct {
	cfg     Config
	cancel  context.CancelFunc
	done    chan error
	factory informers.SharedInformerFactory
}

// Start starts the enforcer and returns once it has written its rules and
// reads its queue. From then on, a Pod on the node that a NetworkPolicy
// selects is isolated as the policy says. Stop undoes it.
func Start(ctx context.Context, cfg Config) (*Enforcer, error) {
	cfg = withDefaults(cfg)
	clientset, err := kubernetes.NewForConfig(cfg.RESTConfig)
	if err != nil {
		return nil, fmt.Errorf("network policy enforcer client: %w", err)
	}
	factory := informers.NewSharedInformerFactory(clientset, 0)
	ctrl, err := networkpolicy.NewController(clientset,
		policiesWithoutHandlers{factory.Networking().V1().NetworkPolicies()}, factory.Core().V1().Namespaces(),
		podsWithoutHandlers{factory.Core().V1().Pods()},
		nil, nil, nil, nil, networkpolicy.Config{
			QueueID:     int(cfg.QueueID),
			NodeName:    cfg.NodeName,
			NFTableName: cfg.upstreamTable(),
			// NRI (containerd's) is not used by this node, but must stay
			// on: with it off, v0.8.0 dereferences a nil plugin for every
			// packet whose address is no Pod's (the node's, say). Its
			// client finds no socket at /var/run/nri/nri.sock, logs that
			// and stops; where a containerd serves one, it only learns that
			// runtime's pod addresses, none of which are this node's.
			NRIdisabled: false,
			// The workaround for a conntrack race fixed in 6.12 sends DNS
			// through prerouting; this project's kernels have the fix.
			NetfilterBug1766Fix: false,
		})
	if err != nil {
		return nil, fmt.Errorf("network policy enforcer: %w", err)
	}
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	e := &Enforcer{cfg: cfg, cancel: cancel, done: make(chan error, 1), factory: factory}
	go func() { e.done <- ctrl.Run(runCtx) }()
	factory.Start(runCtx.Done())
	if err := e.waitBound(ctx); err != nil {
		return nil, errors.Join(err, e.Stop())
	}
	// Only now that the queue is read: a packet sent to it before would be
	// dropped.
	if err := installDataplane(cfg.Table, cfg.Bridge, cfg.PodCIDR, cfg.QueueID); err != nil {
		return nil, errors.Join(err, e.Stop())
	}
	cfg.Log.Info("Network policy enforcer ready", "queue", cfg.QueueID, "table", cfg.Table, "bridge", cfg.Bridge)
	return e, nil
}

func withDefaults(cfg Config) Config {
	if cfg.QueueID == 0 {
		cfg.QueueID = DefaultQueueID
	}
	if cfg.Table == "" {
		cfg.Table = DefaultTable
	}
	return cfg
}

// upstreamTable is the table kube-network-policies writes its own rules
// to. On a kernel without nftables' queue statement it cannot (its sync
// logs the error and is retried); where it can, a packet is judged twice,
// with the same verdict.
func (c Config) upstreamTable() string { return c.Table + "-knp" }

// waitBound waits until the controller reads its queue, which it opens
// after its caches synced and it wrote its first rules.
func (e *Enforcer) waitBound(ctx context.Context) error {
	err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, startTimeout, true, func(context.Context) (bool, error) {
		select {
		case err := <-e.done:
			e.done <- err // for Stop
			return false, fmt.Errorf("network policy enforcer stopped: %w", err)
		default:
		}
		return queueBound(nfqueueProcFile, e.cfg.QueueID)
	})
	if err != nil {
		return fmt.Errorf("waiting for the network policy enforcer to read nfqueue %d: %w", e.cfg.QueueID, err)
	}
	return nil
}

// nfqueueProcFile lists the nfqueues that a process reads, one a line,
// the queue number first.
const nfqueueProcFile = "/proc/net/netfilter/nfnetlink_queue"

// queueBound reports whether path lists queue.
func queueBound(path string, queue uint16) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer func() { _ = f.Close() }()
	want := strconv.Itoa(int(queue))
	s := bufio.NewScanner(f)
	for s.Scan() {
		if fields := strings.Fields(s.Text()); len(fields) > 0 && fields[0] == want {
			return true, nil
		}
	}
	return false, s.Err()
}

// Stop removes the rules that send packets to the queue, then stops the
// controller (which removes its own table). Should the process end without
// Stop, the rules stay and, with nothing reading the queue, the packets
// they send to it are dropped until the next Start replaces them.
func (e *Enforcer) Stop() error {
	err := deleteTable(e.cfg.Table)
	e.cancel()
	err = errors.Join(err, <-e.done)
	e.factory.Shutdown()
	return err
}
