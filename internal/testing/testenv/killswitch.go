package testenv

import (
	"context"
	"errors"
	"net"
	"sync"

	"k8s.io/client-go/rest"
)

// ErrKilled is what a KillSwitch's connections fail with once it was
// pulled.
var ErrKilled = errors.New("testenv: the process was killed")

// KillSwitch plays the death of a process that talks to the API server: a
// rest.Config made with Config dials through it, and Kill closes every
// connection it dialed and refuses new ones. Requests in flight fail as
// they would when the process dies; nothing the process still tries
// afterwards reaches the API server. A test that runs an operator in
// process pulls it before canceling the manager's context, so that the
// goroutines a manager leaves behind (controller-runtime does not wait for
// them without a graceful shutdown period) cannot write anymore.
type KillSwitch struct {
	dialer net.Dialer
	mu     sync.Mutex
	killed bool
	conns  map[net.Conn]struct{}
}

// NewKillSwitch returns a switch that has not been pulled.
func NewKillSwitch() *KillSwitch {
	return &KillSwitch{conns: map[net.Conn]struct{}{}}
}

// Config returns a copy of cfg whose connections go through the switch.
// Each such config gets its own HTTP transport: client-go does not share
// transports of configs with a custom dialer.
func (k *KillSwitch) Config(cfg *rest.Config) *rest.Config {
	out := rest.CopyConfig(cfg)
	out.Dial = k.dial
	return out
}

// Kill closes every connection and refuses new ones. It is idempotent.
func (k *KillSwitch) Kill() {
	k.mu.Lock()
	k.killed = true
	conns := make([]net.Conn, 0, len(k.conns))
	for conn := range k.conns {
		conns = append(conns, conn)
	}
	k.mu.Unlock()
	for _, conn := range conns {
		_ = conn.Close()
	}
}

// Killed reports whether Kill was called.
func (k *KillSwitch) Killed() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.killed
}

// Open is the number of connections dialed and not closed yet.
func (k *KillSwitch) Open() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.conns)
}

func (k *KillSwitch) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	if k.Killed() {
		return nil, ErrKilled
	}
	conn, err := k.dialer.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.killed {
		_ = conn.Close()
		return nil, ErrKilled
	}
	tracked := &switchedConn{Conn: conn, k: k}
	k.conns[tracked] = struct{}{}
	return tracked, nil
}

// switchedConn forgets itself when closed.
type switchedConn struct {
	net.Conn
	k    *KillSwitch
	once sync.Once
}

func (c *switchedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() {
		c.k.mu.Lock()
		delete(c.k.conns, c)
		c.k.mu.Unlock()
	})
	return err
}
