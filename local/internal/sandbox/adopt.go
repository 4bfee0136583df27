package sandbox

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"time"
)

// A host writes down each sandbox it creates and each container it starts,
// so that a later host with the same StateDir and BridgeName can take them
// over (HostConfig.Adopt) after this process died, as a restarted kubelet
// finds its pods' containers still running under the container runtime.

const (
	sandboxRecordFile   = "sandbox.json"   // in the pod's directory
	containerRecordFile = "container.json" // in the container's bundle
)

// sandboxRecord is what a later host needs to rebuild a Sandbox.
type sandboxRecord struct {
	Spec       SandboxSpec `json:"spec"`
	IP         netip.Addr  `json:"ip"`
	IDBase     uint32      `json:"idBase"`
	IDMapped   bool        `json:"idMapped"`
	SystemDirs []string    `json:"systemDirs"`
}

// containerRecord is what a later host needs to rebuild a Container.
type containerRecord struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	Attempt   int       `json:"attempt"`
	StartedAt time.Time `json:"startedAt"`
	TTY       bool      `json:"tty"`
}

func (s *Sandbox) record() sandboxRecord {
	return sandboxRecord{Spec: s.spec, IP: s.ip, IDBase: s.ids.base, IDMapped: s.ids.mapped, SystemDirs: s.systemDirs}
}

func (c *Container) record() containerRecord {
	return containerRecord{ID: c.id, Name: c.name, Attempt: c.attempt, StartedAt: c.startedAt, TTY: c.tty}
}

// writeRecord writes v as JSON to path through a temporary file, so that a
// crash leaves the old record or the new one, never half of one.
func writeRecord(path string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func readRecord(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// adopted is what adopt took over, for the sweep to keep.
type adopted struct {
	podUIDs    map[string]bool
	containers map[string]bool // runc ids
	netns      map[string]bool
	veths      map[string]bool
}

func (a adopted) any() bool { return len(a.podUIDs) > 0 }

// adopt rebuilds the sandboxes an earlier host left whose records and
// namespaces are intact, with their containers: running ones, and ones that
// ended meanwhile (conmon wrote their exit files), whose Done closes once
// they are cleaned up. A sandbox that cannot be rebuilt is left to the
// sweep.
func (h *Host) adopt() adopted {
	kept := adopted{podUIDs: map[string]bool{}, containers: map[string]bool{}, netns: map[string]bool{}, veths: map[string]bool{}}
	entries, err := os.ReadDir(filepath.Join(h.cfg.StateDir, "pods"))
	if err != nil {
		return kept
	}
	for _, e := range entries {
		s, err := h.adoptSandbox(filepath.Join(h.cfg.StateDir, "pods", e.Name()))
		if err != nil {
			h.cfg.Log.Info("Not adopting a sandbox of an earlier run", "dir", e.Name(), "reason", err.Error())
			continue
		}
		kept.podUIDs[s.spec.UID] = true
		if s.net != nil {
			kept.netns[s.net.netns], kept.veths[s.net.veth] = true, true
		}
		for id := range s.containers {
			kept.containers[id] = true
		}
		h.cfg.Log.Info("Adopted sandbox", "pod", s.spec.Namespace+"/"+s.spec.Name, "uid", s.spec.UID, "ip", s.ip, "containers", len(s.containers))
	}
	return kept
}

// adoptSandbox rebuilds one sandbox from its directory.
func (h *Host) adoptSandbox(dir string) (*Sandbox, error) {
	var rec sandboxRecord
	if err := readRecord(filepath.Join(dir, sandboxRecordFile), &rec); err != nil {
		return nil, err
	}
	if filepath.Base(dir) != rec.Spec.UID {
		return nil, fmt.Errorf("record of pod %s in directory %s", rec.Spec.UID, dir)
	}
	s := &Sandbox{
		host: h, spec: rec.Spec, dir: dir, ip: rec.IP, ids: idMap{base: rec.IDBase, mapped: rec.IDMapped},
		systemDirs: rec.SystemDirs, containers: map[string]*Container{}, wasAdopted: true,
	}
	if !rec.Spec.HostNetwork {
		s.ip = rec.IP
		s.net = &podNetwork{
			netns: h.names.netns(rec.Spec.UID), veth: h.names.veth(rec.Spec.UID), bridge: h.cfg.BridgeName,
			ip: s.ip, gateway: h.gateway, bits: h.cfg.PodCIDR.Bits(), guard: h.names.portGuardTable(), ids: s.ids, userns: s.usernsPath(),
		}
		if _, err := os.Stat(s.netnsPath()); err != nil {
			return nil, fmt.Errorf("network namespace: %w", err)
		}
		if !h.cfg.PodCIDR.Contains(s.ip) {
			return nil, fmt.Errorf("address %s is outside the pod CIDR %s", s.ip, h.cfg.PodCIDR)
		}
		if err := s.net.reguard(); err != nil {
			return nil, fmt.Errorf("guarding its port: %w", err)
		}
	}
	if err := h.reserve(s); err != nil {
		return nil, err
	}
	h.adoptContainers(s)
	h.sandboxes[s.spec.UID] = s
	return s, nil
}

// reserve marks the sandbox's address and id range as taken.
func (h *Host) reserve(s *Sandbox) error {
	if s.ids.mapped {
		if err := h.ids.reserve(s.ids); err != nil {
			return err
		}
	}
	if s.net != nil {
		if err := h.pool.reserve(s.ip); err != nil {
			h.ids.release(s.ids)
			return err
		}
	}
	return nil
}

// adoptContainers rebuilds the sandbox's containers that runc still knows
// or whose exit conmon recorded; others (their runc state is gone) are
// left to the sweep.
func (h *Host) adoptContainers(s *Sandbox) {
	entries, err := os.ReadDir(filepath.Join(s.dir, containersSubdir))
	if err != nil {
		return
	}
	for _, e := range entries {
		var rec containerRecord
		if err := readRecord(filepath.Join(s.dir, containersSubdir, e.Name(), containerRecordFile), &rec); err != nil || rec.ID != e.Name() {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		_, stateErr := h.runc.output(ctx, "state", rec.ID)
		cancel()
		exit, exitErr := os.Stat(h.monitor.exitFile(rec.ID))
		if stateErr != nil && exitErr != nil {
			continue
		}
		c := &Container{
			sandbox: s, id: rec.ID, name: rec.Name, attempt: rec.Attempt, tty: rec.TTY,
			dir: filepath.Join(s.dir, containersSubdir, rec.ID), runDir: filepath.Join(h.names.runDir(), rec.ID),
			startedAt: rec.StartedAt, exited: make(chan struct{}), done: make(chan struct{}),
		}
		if exitErr == nil {
			// It ended while no host watched: when conmon wrote its status.
			c.finishedAt = exit.ModTime()
		}
		s.containers[c.id] = c
		s.adopted = append(s.adopted, c)
		go c.wait(h.exits.expect(c.id))
	}
}

// Sandboxes are the host's sandboxes: those created since NewHost and
// those it adopted.
func (h *Host) Sandboxes() []*Sandbox {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]*Sandbox, 0, len(h.sandboxes))
	for _, s := range h.sandboxes {
		out = append(out, s)
	}
	return out
}

// Adopted are the containers the host adopted with the sandbox: those
// running then, and those that ended while no host watched, whose Done
// closes once they are cleaned up. Nil for a sandbox this host created.
func (s *Sandbox) Adopted() []*Container { return s.adopted }

// WasAdopted tells whether the host adopted the sandbox from an earlier
// host rather than created it.
func (s *Sandbox) WasAdopted() bool { return s.wasAdopted }

// Spec is the spec the sandbox was created with (defaults applied).
func (s *Sandbox) Spec() SandboxSpec { return s.spec }

// Name is the container's name in the pod.
func (c *Container) Name() string { return c.name }

// Attempt is the container's restart count when it was started.
func (c *Container) Attempt() int { return c.attempt }
