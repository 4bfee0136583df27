// Package managerdeps gives a controller the collaborators it takes from
// the controller-runtime manager it runs in, the same way for every
// controller: what the caller (a test, the operator) already set wins.
package managerdeps

import (
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/recorder"
)

// Manager is the part of a controller-runtime manager the controllers take
// their collaborators from; ctrl.Manager implements it.
type Manager interface {
	GetClient() client.Client
	GetAPIReader() client.Reader
	GetEventRecorder(name string) recorder.EventRecorder
}

// Fill sets each of the collaborators that is nil from mgr: c to its
// client (reads from the cache), live to its API reader (reads from the
// API server) and rec to an event recorder reporting as controllerName.
func Fill(mgr Manager, controllerName string, c *client.Client, live *client.Reader, rec *events.EventRecorder) {
	if *c == nil {
		*c = mgr.GetClient()
	}
	if *live == nil {
		*live = mgr.GetAPIReader()
	}
	if *rec == nil {
		*rec = mgr.GetEventRecorder(controllerName)
	}
}
