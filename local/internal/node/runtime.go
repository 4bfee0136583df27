package node

import (
	"context"

	"k8s.io/apimachinery/pkg/types"

	"github.com/ray-operator/ray-operator/local/internal/podworker"
	"github.com/ray-operator/ray-operator/local/internal/sandbox"
)

// hostRuntime is podworker.Runtime on a *sandbox.Host. It and hostSandbox
// only change the result types of CreateSandbox and Start to the worker's
// interfaces: Go methods are not covariant in their results.
type hostRuntime struct{ host *sandbox.Host }

var _ podworker.Runtime = hostRuntime{}

// CreateSandbox implements podworker.Runtime.
func (r hostRuntime) CreateSandbox(ctx context.Context, spec sandbox.SandboxSpec) (podworker.Sandbox, error) {
	sb, err := r.host.CreateSandbox(ctx, spec)
	if err != nil {
		return nil, err
	}
	return hostSandbox{sb}, nil
}

// HasSandbox tells whether the host has a sandbox of the pod (one it
// created or adopted).
func (r hostRuntime) HasSandbox(uid types.UID) bool {
	_, ok := r.host.Sandbox(string(uid))
	return ok
}

// hostSandbox is podworker.Sandbox on a *sandbox.Sandbox.
type hostSandbox struct{ *sandbox.Sandbox }

// Start implements podworker.Sandbox.
func (s hostSandbox) Start(ctx context.Context, spec sandbox.ContainerSpec) (podworker.Process, error) {
	c, err := s.Sandbox.Start(ctx, spec)
	if err != nil {
		return nil, err
	}
	return c, nil
}

// Adopted implements podworker.Sandbox.
func (s hostSandbox) Adopted() []podworker.Adoptee {
	cs := s.Sandbox.Adopted()
	out := make([]podworker.Adoptee, 0, len(cs))
	for _, c := range cs {
		out = append(out, c)
	}
	return out
}
