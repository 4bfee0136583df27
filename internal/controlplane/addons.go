package controlplane

import (
	"context"

	"k8s.io/client-go/rest"
)

// An Addon is a cluster component that serves the pods of a NodeNetwork,
// such as the local module's kube-proxy and CoreDNS. Once the API server
// answers and the node is registered, the control plane prepares every
// addon, one after another, then starts them all at once; it stops their
// processes with its own. Two phases, because one addon's objects may have
// to exist before another starts (kube-proxy's first rules must include the
// kube-dns Service that CoreDNS prepares). Addons live outside this package
// so that the operator's module, which uses the control plane for its tests
// and benchmarks, does not depend on what they need.
type Addon interface {
	// Name names the addon in errors.
	Name() string
	// Prepare creates the API objects the addon serves, before any addon
	// starts.
	Prepare(ctx context.Context, host *Host) error
	// Start starts the addon's processes through host and returns once the
	// addon is ready.
	Start(ctx context.Context, host *Host) error
}

// Host is what the control plane lends an Addon while it starts.
type Host struct {
	cp    *ControlPlane
	opts  *Options
	creds *credentials
}

// Network is the node network the addon serves; nil for the Options.Addons
// of a control plane without one.
func (h *Host) Network() *NodeNetwork { return h.opts.Network }

// KubeconfigPath is the admin kubeconfig.
func (h *Host) KubeconfigPath() string { return h.opts.KubeconfigPath }

// RESTConfig reaches the API server as a cluster admin.
func (h *Host) RESTConfig() *rest.Config { return h.cp.RESTConfig }

// StateDir is where the addon keeps its configuration and logs.
func (h *Host) StateDir() string { return h.opts.StateDir }

// BinDir holds the Kubernetes binaries (kube-proxy among them).
func (h *Host) BinDir() string { return h.opts.BinDir }

// Run starts a process that logs under name and is stopped with the
// control plane.
func (h *Host) Run(name, binary string, args []string) error {
	return h.cp.run(h.opts, name, binary, args)
}

// RunEnv is Run with env ("KEY=value") added to the process's environment,
// for programs that read their settings from it.
func (h *Host) RunEnv(name, binary string, args, env []string) error {
	return h.cp.runEnv(h.opts, name, binary, args, env)
}

// AtStop has the control plane call f once every process has ended.
func (h *Host) AtStop(f func() error) { h.cp.atStop(f) }

// WaitFor polls check until it succeeds, a process of the control plane
// exits or ctx ends; what names the wait in errors.
func (h *Host) WaitFor(ctx context.Context, what string, check func(context.Context) error) error {
	return h.cp.waitFor(ctx, what, check)
}

// KubeletClientCert is the client certificate and key files kube-apiserver
// presents to kubelets, which other clients of the kubelet API (such as
// metrics-server) may present too.
func (h *Host) KubeletClientCert() (certFile, keyFile string) {
	c := h.creds.kubeletClient
	return c.certFile, c.keyFile
}
