package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"

	specs "github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"
)

// Every pod without HostUsers gets a user namespace of its own that maps the
// container's ids 0..65535 to a range of host ids nobody else uses, as a
// kubelet does for `hostUsers: false`: root in the container is an
// unprivileged user on the host, and no two pods share an id.
const (
	// userNSBase is the first host id of the first pod's range, far above
	// the ids of the host's users and of other tools' subordinate ranges.
	userNSBase = 1 << 28
	// userNSSize is the number of ids of each pod.
	userNSSize = 1 << 16
	// userNSSlots is how many ranges fit below 2^32-1, an invalid id.
	userNSSlots = (1<<32-userNSBase)/userNSSize - 1
)

// idMap maps container ids to host ids: the identity for a pod with host
// users (base 0, not mapped), else base+id.
type idMap struct {
	base   uint32
	mapped bool
}

// hostID is the host uid or gid of a container uid or gid (one map serves
// both).
func (m idMap) hostID(id uint32) int { return int(m.base + id) }

// chownToRoot gives path (not a symlink's target) to the container's root.
func (m idMap) chownToRoot(path string) error {
	return os.Lchown(path, m.hostID(0), m.hostID(0))
}

// mappings are the OCI uid and gid mappings, nil for host users.
func (m idMap) mappings() []specs.LinuxIDMapping {
	if !m.mapped {
		return nil
	}
	return []specs.LinuxIDMapping{{ContainerID: 0, HostID: m.base, Size: userNSSize}}
}

// idRanges hands out the pods' id ranges.
type idRanges struct {
	mu    sync.Mutex
	inUse map[uint32]bool // slot numbers
	next  uint32
}

func newIDRanges() *idRanges { return &idRanges{inUse: map[uint32]bool{}} }

// allocate returns a free range.
func (r *idRanges) allocate() (idMap, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for range userNSSlots {
		slot := r.next
		r.next = (r.next + 1) % userNSSlots
		if !r.inUse[slot] {
			r.inUse[slot] = true
			return idMap{base: userNSBase + slot*userNSSize, mapped: true}, nil
		}
	}
	return idMap{}, errors.New("no user namespace id range is free")
}

// reserve marks m's range as allocated (an adopted pod's range).
func (r *idRanges) reserve(m idMap) error {
	if m.base < userNSBase || (m.base-userNSBase)%userNSSize != 0 || (m.base-userNSBase)/userNSSize >= userNSSlots {
		return fmt.Errorf("id range at %d is not one of this host's", m.base)
	}
	slot := (m.base - userNSBase) / userNSSize
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.inUse[slot] {
		return fmt.Errorf("id range at %d is taken twice", m.base)
	}
	r.inUse[slot] = true
	return nil
}

// release frees m's range; host users' maps are ignored.
func (r *idRanges) release(m idMap) {
	if !m.mapped {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.inUse, (m.base-userNSBase)/userNSSize)
}

// usernsFile is where a pod's user namespace is bind-mounted in its
// directory, for its containers to join.
const usernsFile = "userns"

// holdNamespaces creates a user namespace with m's mappings and, with
// netnsName, a network namespace owned by it (as a pod sandbox does, so
// that the pod's root may configure its own network and mount its sysfs).
// It bind-mounts the user namespace at usernsPath and the network namespace
// at /run/netns/<netnsName>. A short-lived process holds them meanwhile.
func holdNamespaces(m idMap, usernsPath, netnsName string) error {
	cat, err := exec.LookPath("cat")
	if err != nil {
		return err
	}
	cmd := exec.Command(cat)
	flags := uintptr(unix.CLONE_NEWUSER)
	if netnsName != "" {
		flags |= unix.CLONE_NEWNET
	}
	ids := []syscall.SysProcIDMap{{ContainerID: 0, HostID: int(m.base), Size: userNSSize}}
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: flags, UidMappings: ids, GidMappings: ids, GidMappingsEnableSetgroups: true}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start the namespaces' holder: %w", err)
	}
	err = bindNamespaces(cmd.Process.Pid, usernsPath, netnsName)
	return errors.Join(err, stdin.Close(), cmd.Wait())
}

// bindNamespaces bind-mounts the user and (with netnsName) network
// namespaces of pid.
func bindNamespaces(pid int, usernsPath, netnsName string) error {
	proc := "/proc/" + strconv.Itoa(pid) + "/ns/"
	if err := bindNamespace(proc+"user", usernsPath); err != nil {
		return err
	}
	if netnsName == "" {
		return nil
	}
	if err := os.MkdirAll(netnsDir, 0o755); err != nil {
		return err
	}
	return bindNamespace(proc+"net", filepath.Join(netnsDir, netnsName))
}

func bindNamespace(source, target string) error {
	f, err := os.OpenFile(target, os.O_CREATE|os.O_EXCL|os.O_RDONLY, 0o444)
	if err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := unix.Mount(source, target, "", unix.MS_BIND, ""); err != nil {
		return fmt.Errorf("bind %s at %s: %w", source, target, err)
	}
	return nil
}
