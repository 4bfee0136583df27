package node

import (
	"context"
	"errors"
	"fmt"

	"github.com/ray-operator/ray-operator/local/internal/kubeletapi"
)

// connection is the part of the node agent that talks to the API server:
// virtual-kubelet's node controller (Lease and status heartbeats) and pod
// controller (the pod watch and status writes), their informers and the
// kubelet API. The pod workers and their
// containers do not depend on it: a node without one keeps its pods
// running, as a stopped kubelet's container runtime does.
type connection struct {
	ctrls    *controllers
	ctx      context.Context // canceled by close
	cancel   context.CancelFunc
	stopHTTP func()
}

// connect builds and runs a connection and waits until the Node is Ready
// in the API; then it publishes every pod worker's status again, as a
// restarted kubelet's status manager does. The caller holds connMu.
func (n *Node) connect(ctx context.Context) (*connection, error) {
	ctrls, err := newControllers(n.cfg, n.client, n.prov, n.recorder)
	if err != nil {
		return nil, err
	}
	c := &connection{ctrls: ctrls}
	c.ctx, c.cancel = context.WithCancel(context.WithoutCancel(ctx))
	api := &kubeletapi.Server{NodeName: n.cfg.NodeName, Pods: n.prov, Usage: n.prov, Clock: n.cfg.Clock}
	if c.stopHTTP, err = api.Serve(c.ctx, n.cfg.ListenAddress.String(), n.tls); err != nil {
		c.cancel()
		return nil, err
	}
	ctrls.run(c.ctx)
	if err := n.waitReady(ctx, ctrls); err != nil {
		c.close()
		return nil, err
	}
	go n.prov.republish()
	go n.watch(c)
	return c, nil
}

// close stops the connection and waits until its controllers have stopped.
func (c *connection) close() {
	c.stopHTTP()
	c.cancel()
	c.ctrls.wait()
}

// watch stops the node when a controller of c stops on its own, not
// because c was closed.
func (n *Node) watch(c *connection) {
	select {
	case <-c.ctx.Done():
		return
	case <-c.ctrls.nc.Done():
	case <-c.ctrls.pc.Done():
	}
	if c.ctx.Err() != nil {
		return
	}
	n.log.Info("A node controller stopped on its own; stopping the node")
	_ = n.Stop(context.WithoutCancel(c.ctx))
}

// Disconnect stops the node agent's side that talks to the API server (see
// connection) and leaves every pod and container running, as stopping a
// kubelet leaves its container runtime running the containers: the Node's
// Lease and status go stale, so that the control plane's node lifecycle
// controller marks the Node and its pods after its grace period; logs,
// exec and port-forward fail until Reconnect. The pod workers keep their
// pods' lifecycle meanwhile (a real stopped kubelet would not restart a
// crashed container, nor post its events, as these workers still do), and
// the volume provisioner, no part of a kubelet, runs on.
func (n *Node) Disconnect() error {
	n.connMu.Lock()
	defer n.connMu.Unlock()
	if n.conn == nil {
		return errors.New("the node is not connected")
	}
	n.conn.close()
	n.conn = nil
	n.log.Info("Node disconnected from the API server")
	return nil
}

// Reconnect starts the node agent's API side again after Disconnect and
// returns once the Node is Ready in the API: it reports the running pods'
// statuses again (same containers, same restart counts) and acts on what
// changed meanwhile (pods deleted or evicted while it was away are
// stopped, new pods started).
func (n *Node) Reconnect(ctx context.Context) error {
	n.connMu.Lock()
	defer n.connMu.Unlock()
	if n.stopped {
		return errors.New("the node has stopped")
	}
	if n.conn != nil {
		return errors.New("the node is connected")
	}
	c, err := n.connect(ctx)
	if err != nil {
		return fmt.Errorf("reconnecting node %s: %w", n.name, err)
	}
	n.conn = c
	n.log.Info("Node reconnected to the API server")
	return nil
}
