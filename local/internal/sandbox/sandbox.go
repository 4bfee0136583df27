package sandbox

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// Defaults of SandboxSpec.
const (
	DefaultClusterDomain = "cluster.local"
	DefaultShmSizeBytes  = 64 << 20
)

// DNSConfig is written as the pod's /etc/resolv.conf.
type DNSConfig struct {
	// Nameservers, Searches and Options are the nameserver, search and
	// options lines.
	Nameservers, Searches, Options []string
}

// HostEntry is an extra /etc/hosts line.
type HostEntry struct {
	// IP is the address the Hostnames resolve to.
	IP string
	// Hostnames are the names of IP.
	Hostnames []string
}

// SandboxSpec describes one pod's sandbox.
type SandboxSpec struct { //nolint:revive // the name is part of the package contract the node agent codes against
	// UID is the pod's UID; one sandbox per UID.
	UID string
	// Namespace and Name are the pod's.
	Namespace, Name string
	// Hostname is the pod's hostname (its name, or spec.hostname); default Name.
	Hostname string
	// Subdomain, when set, puts the FQDN
	// <hostname>.<subdomain>.<namespace>.svc.<domain> into /etc/hosts.
	Subdomain string
	// ClusterDomain is <domain> above; default "cluster.local".
	ClusterDomain string
	// ShmSizeBytes is the size of the pod's /dev/shm tmpfs, shared by its
	// containers; 0 means 64 MiB.
	ShmSizeBytes int64
	// DNS is written as the pod's /etc/resolv.conf.
	DNS DNSConfig
	// HostAliases are extra /etc/hosts lines.
	HostAliases []HostEntry
	// HostNetwork gives the pod no network namespace of its own; its IP is
	// the gateway address and its containers keep the host's hostname.
	HostNetwork bool
	// HostUsers runs the pod's containers as the host's users, without a
	// user namespace of their own: root in the container is root on the
	// host. The node asks for it only for pods it admitted with host
	// access (privileged containers, host namespaces); every other pod's
	// container root is an unprivileged user of the host.
	HostUsers bool
	// PidsLimit bounds the processes and threads of all the pod's
	// containers together (pids.max of the pod's cgroup, the kubelet's
	// podPidsLimit); 0 or less: no limit of the pod's own.
	PidsLimit int64
	// CPUShares is the cpu.shares of the pod's cgroup (the pod's weight
	// against the node's other pods, from its CPU requests); 0 leaves the
	// default, 1024.
	CPUShares uint64
}

// Sandbox is one pod: its directory with the /etc files and the /dev/shm
// tmpfs, its network namespace and address, and its running containers.
type Sandbox struct {
	host *Host
	spec SandboxSpec
	dir  string
	ip   netip.Addr
	net  *podNetwork // nil for a host-network pod
	ids  idMap       // the pod's user namespace, or host users

	systemDirs []string // bind-mounted read-only into every container

	mu         sync.Mutex
	containers map[string]*Container // running ones, by runc id
	adopted    []*Container          // what an adopting host found, see Adopted
	wasAdopted bool
	destroyed  bool
}

// Subdirectories of a pod's directory that the sandbox itself uses; callers
// keep their own files (volumes, logs) under other names.
const (
	etcSubdir        = "etc"
	shmSubdir        = "shm"
	containersSubdir = "containers"
	baseSubdir       = "base" // the lower layer of every container's root
)

// CreateSandbox makes the pod's directory (/etc files, /dev/shm tmpfs) and,
// unless HostNetwork, its network namespace, veth pair and address. A second
// call with the same UID returns the existing sandbox.
func (h *Host) CreateSandbox(ctx context.Context, spec SandboxSpec) (*Sandbox, error) {
	spec, err := sandboxDefaults(spec)
	if err != nil {
		return nil, err
	}
	// Creation is serialized: it takes milliseconds, and holding the lock
	// makes a second call with the same UID wait for the first.
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, errors.New("host is closed")
	}
	if s, ok := h.sandboxes[spec.UID]; ok {
		return s, nil
	}
	s := &Sandbox{
		host: h, spec: spec, dir: filepath.Join(h.cfg.StateDir, "pods", spec.UID),
		ip: h.gateway, containers: map[string]*Container{},
	}
	if !spec.HostUsers {
		if s.ids, err = h.ids.allocate(); err != nil {
			return nil, err
		}
	}
	if !spec.HostNetwork {
		if s.ip, err = h.pool.allocate(); err != nil {
			h.ids.release(s.ids)
			return nil, err
		}
		s.net = &podNetwork{
			netns: h.names.netns(spec.UID), veth: h.names.veth(spec.UID), bridge: h.cfg.BridgeName,
			ip: s.ip, gateway: h.gateway, bits: h.cfg.PodCIDR.Bits(), guard: h.names.portGuardTable(),
			ids: s.ids, userns: s.usernsPath(),
		}
	}
	if err := s.setUp(); err != nil {
		return nil, errors.Join(err, s.tearDown())
	}
	if err := writeRecord(filepath.Join(s.dir, sandboxRecordFile), s.record()); err != nil {
		return nil, errors.Join(err, s.tearDown())
	}
	h.sandboxes[spec.UID] = s
	h.cfg.Log.Info("Created sandbox", "pod", spec.Namespace+"/"+spec.Name, "uid", spec.UID, "ip", s.ip, "hostRootUID", s.ids.hostID(0))
	return s, nil
}

func sandboxDefaults(spec SandboxSpec) (SandboxSpec, error) {
	if spec.UID == "" || spec.UID == "." || spec.UID == ".." || strings.ContainsAny(spec.UID, "/\x00") {
		return spec, fmt.Errorf("invalid pod UID %q", spec.UID)
	}
	if spec.Hostname == "" {
		spec.Hostname = spec.Name
	}
	if spec.ClusterDomain == "" {
		spec.ClusterDomain = DefaultClusterDomain
	}
	if spec.ShmSizeBytes <= 0 {
		spec.ShmSizeBytes = DefaultShmSizeBytes
	}
	return spec, nil
}

// setUp builds the base root, writes the /etc files, mounts /dev/shm and
// makes the pod network.
func (s *Sandbox) setUp() error {
	// Only root on the host passes: the pod's volumes (its secrets among
	// them), its containers' layers and logs are no other host user's.
	// runc reaches the mount sources below it through their staged binds
	// (see stageBinds), in the container's run directory.
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return err
	}
	if err := os.Chmod(s.dir, 0o700); err != nil {
		return err
	}
	etc := filepath.Join(s.dir, etcSubdir)
	for _, d := range []string{etc, filepath.Join(s.dir, shmSubdir), filepath.Join(s.dir, containersSubdir)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	var err error
	if s.systemDirs, err = rootBase(filepath.Join(s.dir, baseSubdir), "/", s.ids); err != nil {
		return fmt.Errorf("base root: %w", err)
	}
	files := map[string]string{
		"resolv.conf": resolvConf(s.spec.DNS),
		"hosts":       etcHosts(s.spec, s.ip),
		"hostname":    s.spec.Hostname + "\n",
		"profile":     loginProfile,
	}
	for name, content := range files {
		p := filepath.Join(etc, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			return err
		}
		// Root in the container may change them, as in any pod.
		if err := s.ids.chownToRoot(p); err != nil {
			return err
		}
	}
	if err := mountTmpfs(filepath.Join(s.dir, shmSubdir), s.spec.ShmSizeBytes); err != nil {
		return err
	}
	if err := makePodCgroup(s.host.names.podCgroup(s.spec.UID), s.spec.PidsLimit); err != nil {
		return fmt.Errorf("pod cgroup: %w", err)
	}
	if s.spec.CPUShares > 0 {
		if err := hostCgroups().limitCPUShares(s.host.names.podCgroup(s.spec.UID), s.spec.CPUShares); err != nil {
			return fmt.Errorf("pod cgroup: %w", err)
		}
	}
	if s.net != nil {
		return s.net.create()
	}
	if s.ids.mapped {
		return holdNamespaces(s.ids, s.usernsPath(), "")
	}
	return nil
}

// usernsPath is where the pod's user namespace is bind-mounted.
func (s *Sandbox) usernsPath() string { return filepath.Join(s.dir, usernsFile) }

// tearDown unmounts and removes what setUp made and releases the address.
// The caller holds the host's lock.
func (s *Sandbox) tearDown() error {
	var errs []error
	if s.net != nil {
		errs = append(errs, s.net.destroy())
		s.host.pool.release(s.ip)
	}
	s.host.ids.release(s.ids)
	errs = append(errs, s.removeCgroup())
	if err := unmountAll(s.dir); err != nil {
		errs = append(errs, err)
	} else {
		errs = append(errs, removeUnmounted(s.dir))
	}
	return errors.Join(errs...)
}

// Sandbox returns the sandbox of a pod UID.
func (h *Host) Sandbox(uid string) (*Sandbox, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s, ok := h.sandboxes[uid]
	return s, ok
}

// IP is the pod's address (the gateway's for a host-network pod).
func (s *Sandbox) IP() netip.Addr { return s.ip }

// HostIDs are the host uid and gid that a container's uid and gid are.
func (s *Sandbox) HostIDs(uid, gid uint32) (int, int) {
	return s.ids.hostID(uid), s.ids.hostID(gid)
}

// Dir is the pod's own directory. Callers keep volumes and logs below it,
// under names other than etc, shm and containers; Destroy removes it.
func (s *Sandbox) Dir() string { return s.dir }

// netnsPath is the pod's network namespace, or "" for a host-network pod.
func (s *Sandbox) netnsPath() string {
	if s.net == nil {
		return ""
	}
	return filepath.Join(netnsDir, s.net.netns)
}

// DialContext dials from inside the pod's network namespace (port-forward
// dials "tcp", "localhost:<port>").
func (s *Sandbox) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	if s.net == nil {
		var d net.Dialer
		return d.DialContext(ctx, network, address)
	}
	return dialInNetns(ctx, s.netnsPath(), network, address)
}

// Destroy kills what still runs in the pod (SIGKILL), waits for its
// containers to be cleaned up, unmounts, deletes the network namespace and
// veth, releases the address and removes the pod's directory. It is
// idempotent.
func (s *Sandbox) Destroy(ctx context.Context) error {
	s.mu.Lock()
	if s.destroyed {
		s.mu.Unlock()
		return nil
	}
	s.destroyed = true
	running := make([]*Container, 0, len(s.containers))
	for _, c := range s.containers {
		running = append(running, c)
	}
	s.mu.Unlock()

	var errs []error
	for _, c := range running {
		if err := c.Kill(); err != nil {
			errs = append(errs, err)
		}
	}
	for _, c := range running {
		select {
		case <-c.Done():
		case <-ctx.Done():
			errs = append(errs, fmt.Errorf("container %s: %w", c.id, ctx.Err()))
		}
	}
	h := s.host
	h.mu.Lock()
	defer h.mu.Unlock()
	errs = append(errs, s.tearDown())
	delete(h.sandboxes, s.spec.UID)
	err := errors.Join(errs...)
	h.cfg.Log.Info("Destroyed sandbox", "pod", s.spec.Namespace+"/"+s.spec.Name, "uid", s.spec.UID, "error", err)
	return err
}
