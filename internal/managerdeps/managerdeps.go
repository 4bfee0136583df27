// Package managerdeps holds the collaborators every controller has (its
// client, live reader, event recorder and clock), how they are taken from
// the controller-runtime manager it runs in, and their defaults: the same
// way for every controller, and what the caller (a test, the operator)
// already set wins.
package managerdeps

import (
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	"github.com/ray-operator/ray-operator/internal/childwrite"
	"github.com/ray-operator/ray-operator/internal/eventrecord"
)

// Manager is the part of a controller-runtime manager the controllers take
// their collaborators from; ctrl.Manager implements it.
type Manager interface {
	GetClient() client.Client
	GetAPIReader() client.Reader
	GetEventRecorder(name string) recorder.EventRecorder
}

// Core are the collaborators every controller has. Each controller's Deps
// embeds it beside what is its own; tests replace any of them.
type Core struct {
	// Client reads from the manager's cache and writes to the API server.
	Client client.Client
	// LiveReader reads from the API server, bypassing the cache, what the
	// cache may not show yet or does not hold (Secrets the operator did not
	// label); nil means Client.
	LiveReader client.Reader
	// Recorder records events; nil records nothing.
	Recorder events.EventRecorder
	// Clock is the time source; nil means the real clock. It has tickers
	// so that work queues and probes can wait on it too.
	Clock clock.WithTicker
}

// FillFrom sets each collaborator that is nil from mgr: Client to its
// client (reads from the cache), LiveReader to its API reader (reads from
// the API server) and Recorder to an event recorder reporting as
// controllerName.
func (c *Core) FillFrom(mgr Manager, controllerName string) {
	if c.Client == nil {
		c.Client = mgr.GetClient()
	}
	if c.LiveReader == nil {
		c.LiveReader = mgr.GetAPIReader()
	}
	if c.Recorder == nil {
		c.Recorder = mgr.GetEventRecorder(controllerName)
	}
}

// Defaulted is c with its defaults filled in: the real clock, and Client
// as the live reader.
func (c Core) Defaulted() Core {
	if c.Clock == nil {
		c.Clock = clock.RealClock{}
	}
	if c.LiveReader == nil {
		c.LiveReader = c.Client
	}
	return c
}

// Events records events through Recorder (nothing when it is nil).
func (c Core) Events() eventrecord.Recorder { return eventrecord.New(c.Recorder) }

// Children writes the objects a controller's object owns, with their
// events on it.
func (c Core) Children() childwrite.Writer {
	return childwrite.Writer{Client: c.Client, Events: c.Events()}
}
