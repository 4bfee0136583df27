package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/go-logr/logr"
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
	return runSteps([]step{
		{"runc containers", func() error { return h.sweepRuncContainers(ctx, kept) }},
		{"cgroups", func() error { return h.sweepCgroups(ctx, kept) }},
		{"mounts", func() error { return h.sweepMounts(kept) }},
		{"network namespaces", func() error { return h.sweepNetns(kept) }},
		{"veths", func() error { return h.sweepVeths(kept) }},
		{"files", func() error { return h.sweepFiles(kept) }},
	})
}

// step is one step of a sweep.
type step struct {
	name string
	run  func() error
}

// runSteps runs every step, even after one failed, and joins their errors.
func runSteps(steps []step) error {
	var errs []error
	for _, s := range steps {
		if err := s.run(); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", s.name, err))
		}
	}
	return errors.Join(errs...)
}

// deadHost is a host every process of which died (see ownerRegistry).
type deadHost struct {
	stateDir string
	names    names
	// ownsStateDir and ownsNetwork say that no live host shares its state
	// directory (its runc root, the mounts under it) or its bridge (and
	// nftables table).
	ownsStateDir, ownsNetwork bool
}

// sweep removes what the dead host left: its runc containers and cgroups
// (killing what still runs in them), the mounts under its run and state
// directories, its pods' network namespaces and veths, its run directory
// and its bridge, nftables table and share of the kernel settings, each
// unless a live host shares it. Files under the state directory stay: the
// directory is its user's, and a host started on it again sweeps them.
func (d deadHost) sweep(ctx context.Context, log logr.Logger) error {
	n := d.names
	var steps []step
	add := func(when bool, name string, run func() error) {
		if when {
			steps = append(steps, step{name, run})
		}
	}
	add(d.ownsStateDir, "runc containers", func() error { return sweepDeadRunc(ctx, d.stateDir, log) })
	add(true, "cgroups", func() error { return removeCgroupTree(ctx, n.cgroupParent()) })
	add(true, "run directory mounts", func() error { return unmountAll(n.runDir()) })
	add(d.ownsStateDir, "state directory mounts", func() error { return unmountAll(d.stateDir) })
	add(true, "network namespaces", func() error { return sweepNetnsOf(n, nil, log) })
	add(true, "veths", func() error { return sweepVethsOf(n, nil) })
	add(true, "run directory", func() error { return removeUnmounted(n.runDir()) })
	add(d.ownsNetwork, "network", func() error { return closeDeadNetwork(n) })
	return runSteps(steps)
}

// sweepDeadRunc force-deletes the containers in the runc root of a dead
// host's state directory; without runc on PATH, removing the host's
// cgroups kills them instead.
func sweepDeadRunc(ctx context.Context, stateDir string, log logr.Logger) error {
	binary, err := exec.LookPath(DefaultRuncBinary)
	if err != nil {
		return nil
	}
	return sweepRuncRoot(ctx, runcCLI{binary: binary, root: filepath.Join(stateDir, "runc")}, nil, log)
}

// closeDeadNetwork removes a dead network's nftables table and bridge and
// gives its share of the kernel settings back (see sysctlRegistry).
func closeDeadNetwork(n names) error {
	sysctls := sysctlRegistry{dir: defaultSysctlRegistryDir, settings: hostSysctls}
	return errors.Join(deleteNftTable(n.nftTable()), deletePortGuard(n.portGuardTable()), deleteLinkIfExists(n.bridge), sysctls.release(n.tag))
}

// sweepRuncContainers force-deletes every container in the host's runc
// root that was not adopted.
func (h *Host) sweepRuncContainers(ctx context.Context, kept adopted) error {
	return sweepRuncRoot(ctx, h.runc, kept.containers, h.cfg.Log)
}

// sweepRuncRoot force-deletes every container in r's root but those in
// keep; a missing root has none.
func sweepRuncRoot(ctx context.Context, r runcCLI, keep map[string]bool, log logr.Logger) error {
	if _, err := os.Stat(r.root); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	ids, err := r.list(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for _, id := range ids {
		if keep[id] {
			continue
		}
		log.Info("Sweeping runc container of an earlier run", "id", id)
		errs = append(errs, r.forceDelete(ctx, id))
	}
	return errors.Join(errs...)
}

// sweepCgroups removes the host's cgroups but those of adopted containers
// and their pods' (a container's cgroup is below its pod's).
func (h *Host) sweepCgroups(ctx context.Context, kept adopted) error {
	parent := h.names.cgroupParent()
	if len(kept.containers) == 0 {
		return removeCgroupTree(ctx, parent)
	}
	keptPods := map[string]bool{}
	for uid := range kept.podUIDs {
		keptPods[filepath.Base(h.names.podCgroup(uid))] = true
	}
	roots, err := cgroupRoots()
	if err != nil {
		return err
	}
	stale := map[string]bool{}
	for _, root := range roots {
		for _, child := range subdirs(filepath.Join(root, parent)) {
			if !keptPods[child] {
				stale[child] = !kept.containers[child]
				continue
			}
			for _, ctr := range subdirs(filepath.Join(root, parent, child)) {
				stale[child+"/"+ctr] = !kept.containers[ctr]
			}
		}
	}
	var errs []error
	for rel, remove := range stale {
		if remove {
			errs = append(errs, removeCgroupTree(ctx, parent+"/"+rel))
		}
	}
	return errors.Join(errs...)
}

// subdirs lists the names of the directories in dir; none if it is missing.
func subdirs(dir string) []string {
	entries, _ := os.ReadDir(dir)
	var out []string
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	return out
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
func (h *Host) sweepNetns(kept adopted) error { return sweepNetnsOf(h.names, kept.netns, h.cfg.Log) }

// sweepNetnsOf deletes the named network namespaces of a host with names n
// but those in keep.
func sweepNetnsOf(n names, keep map[string]bool, log logr.Logger) error {
	entries, err := os.ReadDir(netnsDir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), n.netnsNamePrefix()) && !keep[e.Name()] {
			log.Info("Sweeping network namespace of an earlier run", "netns", e.Name())
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
func (h *Host) sweepVeths(kept adopted) error { return sweepVethsOf(h.names, kept.veths) }

// sweepVethsOf deletes the host-side veths of a host with names n but those
// in keep.
func sweepVethsOf(n names, keep map[string]bool) error {
	links, err := listLinks()
	if err != nil {
		return err
	}
	var errs []error
	for _, l := range links {
		if l.Type() == "veth" && strings.HasPrefix(l.Attrs().Name, n.vethPrefix()) && !keep[l.Attrs().Name] {
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
