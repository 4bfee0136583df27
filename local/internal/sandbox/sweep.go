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
// BridgeName left, except what this host adopted, in dependency order:
// processes first, then the mounts they held, then the pods' network
// objects, then files. The bridge and the nftables table are the
// Network's (see newNetwork).
func (h *Host) sweep(ctx context.Context, kept adopted) error {
	steps := []struct {
		name string
		run  func(context.Context) error
	}{
		{"runc containers", func(ctx context.Context) error { return h.sweepRuncContainers(ctx, kept) }},
		{"cgroups", func(ctx context.Context) error { return h.sweepCgroups(ctx, kept) }},
		{"mounts", func(context.Context) error { return h.sweepMounts(kept) }},
		{"network namespaces", func(context.Context) error { return h.sweepNetns(kept) }},
		{"veths", func(context.Context) error { return h.sweepVeths(kept) }},
		{"files", func(context.Context) error { return h.sweepFiles(kept) }},
	}
	var errs []error
	for _, step := range steps {
		if err := step.run(ctx); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", step.name, err))
		}
	}
	return errors.Join(errs...)
}

// sweepRuncContainers force-deletes every container in the host's runc
// root that was not adopted.
func (h *Host) sweepRuncContainers(ctx context.Context, kept adopted) error {
	if _, err := os.Stat(h.runc.root); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	ids, err := h.runc.list(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for _, id := range ids {
		if kept.containers[id] {
			continue
		}
		h.cfg.Log.Info("Sweeping runc container of an earlier run", "id", id)
		errs = append(errs, h.runc.forceDelete(ctx, id))
	}
	return errors.Join(errs...)
}

// sweepCgroups removes the host's cgroups but those of adopted containers.
func (h *Host) sweepCgroups(ctx context.Context, kept adopted) error {
	parent := h.names.cgroupParent()
	if len(kept.containers) == 0 {
		return removeCgroupTree(ctx, parent)
	}
	roots, err := cgroupRoots()
	if err != nil {
		return err
	}
	children := map[string]bool{}
	for _, root := range roots {
		entries, _ := os.ReadDir(filepath.Join(root, parent))
		for _, e := range entries {
			if e.IsDir() && !kept.containers[e.Name()] {
				children[e.Name()] = true
			}
		}
	}
	var errs []error
	for child := range children {
		errs = append(errs, removeCgroupTree(ctx, parent+"/"+child))
	}
	return errors.Join(errs...)
}

// sweepMounts unmounts what an earlier run left mounted under the run and
// state directories, but the roots of adopted containers and the mounts
// of adopted pods.
func (h *Host) sweepMounts(kept adopted) error {
	var keep []string
	for id := range kept.containers {
		keep = append(keep, filepath.Join(h.names.runDir(), id))
	}
	for uid := range kept.podUIDs {
		keep = append(keep, filepath.Join(h.cfg.StateDir, "pods", uid))
	}
	return errors.Join(unmountAllExcept(h.names.runDir(), keep), unmountAllExcept(h.cfg.StateDir, keep))
}

// sweepNetns deletes the named network namespaces of this host but the
// adopted ones.
func (h *Host) sweepNetns(kept adopted) error {
	entries, err := os.ReadDir(netnsDir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), h.names.netnsNamePrefix()) && !kept.netns[e.Name()] {
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
// the network namespaces, which usually takes the pair along), but the
// adopted ones.
func (h *Host) sweepVeths(kept adopted) error {
	links, err := listLinks()
	if err != nil {
		return err
	}
	var errs []error
	for _, l := range links {
		if l.Type() == "veth" && strings.HasPrefix(l.Attrs().Name, h.names.vethPrefix()) && !kept.veths[l.Attrs().Name] {
			errs = append(errs, deleteLinkIfExists(l.Attrs().Name))
		}
	}
	return errors.Join(errs...)
}

// sweepFiles removes the pod directories, runc's state and the run
// directory's entries, but what was adopted.
func (h *Host) sweepFiles(kept adopted) error {
	if !h.cfg.Adopt {
		return errors.Join(
			removeUnmounted(h.runc.root),
			removeUnmounted(h.names.runDir()),
			removeUnmounted(filepath.Join(h.cfg.StateDir, "pods")),
			os.MkdirAll(filepath.Join(h.cfg.StateDir, "pods"), 0o755),
		)
	}
	return errors.Join(
		removeEntriesExcept(filepath.Join(h.cfg.StateDir, "pods"), kept.podUIDs),
		removeEntriesExcept(h.monitor.socketDir, kept.containers),
		removeEntriesExcept(h.monitor.exitDir, kept.containers),
		removeEntriesExcept(h.names.runDir(), withNames(kept.containers, filepath.Base(h.monitor.socketDir), filepath.Base(h.monitor.exitDir))),
	)
}

// removeEntriesExcept removes the entries of dir whose names keep lacks.
func removeEntriesExcept(dir string, keep map[string]bool) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		if !keep[e.Name()] {
			errs = append(errs, removeUnmounted(filepath.Join(dir, e.Name())))
		}
	}
	return errors.Join(errs...)
}

// withNames is a copy of set with names added.
func withNames(set map[string]bool, names ...string) map[string]bool {
	out := make(map[string]bool, len(set)+len(names))
	for k := range set {
		out[k] = true
	}
	for _, n := range names {
		out[n] = true
	}
	return out
}
