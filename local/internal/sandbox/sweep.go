package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/vishvananda/netns"
)

// netnsDir is where named network namespaces are bind-mounted.
const netnsDir = "/run/netns"

// sweep removes what an earlier run of a host with the same StateDir and
// BridgeName left, in dependency order: processes first, then the mounts they
// held, then network objects, then files.
func (h *Host) sweep(ctx context.Context) error {
	steps := []struct {
		name string
		run  func(context.Context) error
	}{
		{"runc containers", h.sweepRuncContainers},
		{"cgroups", func(ctx context.Context) error { return removeCgroupTree(ctx, h.names.cgroupParent()) }},
		{"mounts", func(context.Context) error {
			return errors.Join(unmountAll(h.names.runDir()), unmountAll(h.cfg.StateDir))
		}},
		{"network namespaces", func(context.Context) error { return h.sweepNetns() }},
		{"veths", func(context.Context) error { return h.sweepVeths() }},
		{"bridge", func(context.Context) error { return deleteLinkIfExists(h.cfg.BridgeName) }},
		{"nftables table", func(context.Context) error { return deleteNftTable(h.names.nftTable()) }},
		{"files", func(context.Context) error { return h.sweepFiles() }},
	}
	var errs []error
	for _, step := range steps {
		if err := step.run(ctx); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", step.name, err))
		}
	}
	return errors.Join(errs...)
}

// sweepRuncContainers force-deletes every container in the host's runc root.
func (h *Host) sweepRuncContainers(ctx context.Context) error {
	if _, err := os.Stat(h.runc.root); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	ids, err := h.runc.list(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for _, id := range ids {
		h.cfg.Log.Info("Sweeping runc container of an earlier run", "id", id)
		errs = append(errs, h.runc.forceDelete(ctx, id))
	}
	return errors.Join(errs...)
}

// sweepNetns deletes the named network namespaces of this host.
func (h *Host) sweepNetns() error {
	entries, err := os.ReadDir(netnsDir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), h.names.netnsNamePrefix()) {
			h.cfg.Log.Info("Sweeping network namespace of an earlier run", "netns", e.Name())
			errs = append(errs, deleteNetns(e.Name()))
		}
	}
	return errors.Join(errs...)
}

// deleteNetns unmounts and removes a named network namespace; a missing one
// is no error.
func deleteNetns(name string) error {
	err := netns.DeleteNamed(name)
	if err == nil || errors.Is(err, os.ErrNotExist) {
		return nil
	}
	// Unmounted but not removed (an earlier attempt was interrupted).
	if rmErr := os.Remove(filepath.Join(netnsDir, name)); rmErr == nil || errors.Is(rmErr, os.ErrNotExist) {
		return nil
	}
	return fmt.Errorf("delete netns %s: %w", name, err)
}

// sweepVeths deletes the host-side veths of this host (their peers went with
// the network namespaces, which usually takes the pair along).
func (h *Host) sweepVeths() error {
	links, err := listLinks()
	if err != nil {
		return err
	}
	var errs []error
	for _, l := range links {
		if l.Type() == "veth" && strings.HasPrefix(l.Attrs().Name, h.names.vethPrefix()) {
			errs = append(errs, deleteLinkIfExists(l.Attrs().Name))
		}
	}
	return errors.Join(errs...)
}

// sweepFiles removes the pod directories and runc's state.
func (h *Host) sweepFiles() error {
	return errors.Join(
		removeUnmounted(h.runc.root),
		removeUnmounted(h.names.runDir()),
		removeUnmounted(filepath.Join(h.cfg.StateDir, "pods")),
		os.MkdirAll(filepath.Join(h.cfg.StateDir, "pods"), 0o755),
	)
}
