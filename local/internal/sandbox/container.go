package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"syscall"
	"time"
)

// Mount is a bind mount of a host directory or file into a container.
type Mount struct {
	// Source is the host directory or file.
	Source string
	// Destination is where it appears in the container; created if missing
	// (as a file when Source is a file).
	Destination string
	// ReadOnly makes the mount refuse writes.
	ReadOnly bool
}

// ContainerSpec describes one attempt of one container.
type ContainerSpec struct {
	// Name is the container's name in the pod.
	Name string
	// Attempt is the restart count; with Name it makes the runc id unique.
	Attempt int
	// Args is argv, already resolved by the caller (argv[0] is looked up in
	// the PATH of Env).
	Args []string
	// Env is the complete environment as KEY=VALUE (the caller includes PATH
	// and HOME).
	Env []string
	// WorkingDir is created if missing; default "/".
	WorkingDir string
	// Mounts are bind-mounted in order after the sandbox's own mounts.
	Mounts []Mount
	// ImageRoot, when set, is the unpacked root of the container's image
	// (from the node's image store): the container's root is an overlay of
	// it and the container's own layer, without the pod's base root or the
	// host's system directories. Empty for the local images.
	ImageRoot string
	// UID and GID run the process; default 0.
	UID, GID uint32
	// AdditionalGIDs are the process's supplementary groups.
	AdditionalGIDs []uint32
	// Privileged grants every capability, every device and a writable /sys.
	Privileged bool
	// CapAdd and CapDrop are Kubernetes capability names ("NET_ADMIN", or
	// "ALL"), applied to the container-runtime default set as container
	// runtimes do: "ALL" in CapDrop empties the set, CapAdd wins over
	// CapDrop.
	CapAdd, CapDrop []string
	// ReadOnlyRoot mounts the container's root read-only; its volumes, /tmp,
	// /dev/shm and /etc files stay writable.
	ReadOnlyRoot bool
	// NoNewPrivileges sets no_new_privs: no execve gains privileges (setuid
	// bits, file capabilities).
	NoNewPrivileges bool
	// Seccomp is the process's seccomp filter; the zero value is none.
	Seccomp Seccomp
	// UnmaskedProc leaves /proc unmasked (Kubernetes' procMount:
	// Unmasked): no hidden or read-only kernel paths.
	UnmaskedProc bool
	// Sysctls are namespaced kernel settings (dotted names) written in the
	// container's namespaces when it starts.
	Sysctls map[string]string
	// MemoryLimitBytes is a cgroup memory limit; 0 means none.
	MemoryLimitBytes int64
	// CPUMillis is a CFS quota in thousandths of a CPU; 0 means none.
	CPUMillis int64
	// CPUShares is the container's cpu.shares (its weight against the
	// pod's other containers); 0 means the runtime's default, 1024.
	CPUShares uint64
	// TmpSizeBytes is the size of the container's /tmp tmpfs; 0 means the
	// kernel's default, half of the machine's memory.
	TmpSizeBytes int64
	// LogPath is the container's CRI log file, which its monitor writes
	// (created if missing, appended to); empty discards the output.
	LogPath string
	// TTY gives the process a terminal (Kubernetes' tty): all its output
	// goes to Stdout, and Attach resizes it.
	TTY bool
	// OpenStdin gives the process a standard input that its monitor keeps
	// open and that Attach writes to (Kubernetes' stdin); without it the
	// input is /dev/null.
	OpenStdin bool
	// StdinOnce closes that input when the first attached client's input
	// ends (Kubernetes' stdinOnce). A terminal stays open: closing it would
	// end the container's output too.
	StdinOnce bool
}

// Container is one started attempt of a container: runc's container under
// its own conmon (see monitor.go), which outlives this process.
type Container struct {
	sandbox *Sandbox
	id      string
	name    string
	attempt int
	dir     string // the bundle: config.json, the layers' upper directories
	runDir  string // the mounted root and staged mount sources (see runRoot)
	tty     bool
	exited  chan struct{} // conmon wrote the exit file; cleanup may still run
	done    chan struct{} // cleanup is finished

	startedAt  time.Time
	finishedAt time.Time // written before done closes (by adopt for an exit it found)
	exitCode   int       // written before done closes
}

// containerNameRE is what runc accepts in an id, which a container name
// becomes part of.
var containerNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.+-]*$`)

// Start mounts a fresh root (see prepareBundle), writes the OCI bundle,
// has conmon create the container and starts it. It returns once the
// container's process runs; Done closes when the container has ended and
// its runc state, root mount and directories are gone.
func (s *Sandbox) Start(ctx context.Context, spec ContainerSpec) (*Container, error) {
	if !containerNameRE.MatchString(spec.Name) {
		return nil, fmt.Errorf("invalid container name %q", spec.Name)
	}
	id := containerID(s.spec.UID, spec.Name, spec.Attempt)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.destroyed {
		return nil, errors.New("sandbox is destroyed")
	}
	if _, running := s.containers[id]; running {
		return nil, fmt.Errorf("container %s attempt %d is already running", spec.Name, spec.Attempt)
	}
	c := &Container{
		sandbox: s, id: id, name: spec.Name, attempt: spec.Attempt,
		dir: filepath.Join(s.dir, containersSubdir, id), runDir: filepath.Join(s.host.names.runDir(), id),
		tty: spec.TTY, exited: make(chan struct{}), done: make(chan struct{})}
	if err := c.prepareBundle(spec); err != nil {
		return nil, errors.Join(err, c.removeBundle())
	}
	if err := c.create(ctx, spec); err != nil {
		return nil, err
	}
	c.startedAt = s.host.cfg.Clock.Now()
	if err := writeRecord(filepath.Join(c.dir, containerRecordFile), c.record()); err != nil {
		// Only a later host's adoption needs the record; this one runs on.
		s.host.cfg.Log.Error(err, "Recording the container", "container", id)
	}
	s.containers[id] = c
	go c.wait(s.host.exits.expect(id))
	return c, nil
}

// create runs the container under conmon and starts its process; on an
// error nothing of the container is left.
func (c *Container) create(ctx context.Context, spec ContainerSpec) error {
	runc := c.sandbox.host.runc
	if _, err := c.createUnderMonitor(ctx, spec); err != nil {
		return errors.Join(fmt.Errorf("container %s: %w", c.id, err), c.forget())
	}
	if _, err := runc.output(ctx, "start", c.id); err != nil {
		return errors.Join(fmt.Errorf("container %s did not start: %w", c.id, err), c.forget())
	}
	return nil
}

// forget deletes a container that never ran: runc's state, the bundle,
// and the exit file its conmon writes when the deletion ends the container
// (a retry of the same attempt must not find it).
func (c *Container) forget() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	h := c.sandbox.host
	var errs []error
	if _, err := h.runc.output(ctx, "state", c.id); err == nil {
		errs = append(errs, h.runc.forceDelete(ctx, c.id))
		select {
		case <-h.exits.expect(c.id):
		case <-time.After(forgetExitWait):
		}
		if err := os.Remove(h.monitor.exitFile(c.id)); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(append(errs, c.removeBundle())...)
}

// forgetExitWait bounds how long forget waits for conmon to record the end
// of a container it deleted.
const forgetExitWait = 5 * time.Second

// prepareBundle mounts the container's root with its own layers (see
// mountLayers) at the container's run directory, stages the mount sources
// runc could not reach and writes config.json.
func (c *Container) prepareBundle(spec ContainerSpec) error {
	if err := c.removeBundle(); err != nil {
		return err
	}
	s := c.sandbox
	rootfs := filepath.Join(c.runDir, "rootfs")
	if err := makePrivateRunDir(c.runDir, s.ids); err != nil {
		return err
	}
	if err := os.MkdirAll(rootfs, 0o711); err != nil {
		return err
	}
	if err := c.mountLayers(rootfs, spec); err != nil {
		return err
	}
	oci, err := runtimeSpec(spec, s.containerFacts(rootfs, c.id))
	if err != nil {
		return err
	}
	if oci.Mounts, err = stageBinds(filepath.Join(c.runDir, "sources"), oci.Mounts); err != nil {
		return err
	}
	data, err := json.Marshal(oci)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(c.dir, "config.json"), data, 0o600)
}

// makePrivateRunDir creates a container's run directory, which holds its
// root and the staged binds of its mount sources (the pod's secrets among
// them): 0700, owned by the pod's root, who sets the mounts up in the
// container's user namespace; no other host user passes.
func makePrivateRunDir(dir string, ids idMap) error {
	if err := os.Mkdir(dir, 0o700); err != nil {
		return err
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return err
	}
	return ids.chownToRoot(dir)
}

// containerFacts says where a container of the sandbox runs.
func (s *Sandbox) containerFacts(rootfs, id string) containerFacts {
	etc := filepath.Join(s.dir, etcSubdir)
	facts := containerFacts{
		RootfsPath:   rootfs,
		IDs:          s.ids,
		UsernsPath:   s.usernsPath(),
		NetnsPath:    s.netnsPath(),
		ShmDir:       filepath.Join(s.dir, shmSubdir),
		ResolvConf:   filepath.Join(etc, "resolv.conf"),
		Hosts:        filepath.Join(etc, "hosts"),
		HostnameFile: filepath.Join(etc, "hostname"),
		Profile:      filepath.Join(etc, "profile"),
		CgroupsPath:  "/" + s.host.names.podCgroup(s.spec.UID) + "/" + id,
		NofileLimit:  s.host.nofile,
	}
	if !s.spec.HostNetwork {
		facts.Hostname = s.spec.Hostname
	}
	return facts
}

// removeBundle unmounts the root and the staged sources and removes the
// container's directories.
func (c *Container) removeBundle() error {
	for _, d := range []string{c.runDir, c.dir} {
		if err := unmountAll(d); err != nil {
			return err
		}
		if err := removeUnmounted(d); err != nil {
			return err
		}
	}
	return nil
}

// wait waits for conmon's exit file, records the exit, deletes runc's
// state, cleans up and closes done.
func (c *Container) wait(exited <-chan struct{}) {
	s := c.sandbox
	select {
	case <-exited:
	case <-s.host.detached:
		return
	}
	exitFile := s.host.monitor.exitFile(c.id)
	code, err := readExitFile(exitFile)
	close(c.exited)
	log := s.host.cfg.Log.WithValues("container", c.id)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.host.runc.forceDelete(ctx, c.id); err != nil {
		log.Error(err, "Deleting the runc container")
	}
	if err := c.removeBundle(); err != nil {
		log.Error(err, "Removing the container's root")
	}
	_ = os.Remove(exitFile)
	s.mu.Lock()
	delete(s.containers, c.id)
	s.mu.Unlock()
	c.exitCode = code
	if c.finishedAt.IsZero() {
		c.finishedAt = s.host.cfg.Clock.Now()
	}
	log.V(1).Info("Container ended", "exitCode", code, "exitFileError", err)
	close(c.done)
}

// Done closes when the container has ended and been cleaned up.
func (c *Container) Done() <-chan struct{} { return c.done }

// ExitCode is valid after Done: the exit status, 128+signal when killed by a
// signal.
func (c *Container) ExitCode() int {
	<-c.done
	return c.exitCode
}

// StartedAt is when the container's process was started.
func (c *Container) StartedAt() time.Time { return c.startedAt }

// FinishedAt is valid after Done: when the container ended.
func (c *Container) FinishedAt() time.Time {
	<-c.done
	return c.finishedAt
}

// ID is the container's runc id.
func (c *Container) ID() string { return c.id }

// Signal sends sig to the container's first process. Note that the first
// process is PID 1 of its PID namespace: the kernel drops signals it has no
// handler for, SIGKILL aside (as for any container).
func (c *Container) Signal(sig syscall.Signal) error {
	select {
	case <-c.done:
		return fmt.Errorf("container %s has ended", c.id)
	default:
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return c.sandbox.host.runc.kill(ctx, c.id, sig)
}

// Kill sends SIGKILL to the container's first process, which as PID 1 of
// the container's PID namespace takes every other process with it. Killing
// an ended container is no error.
func (c *Container) Kill() error {
	err := c.Signal(syscall.SIGKILL)
	if err == nil {
		return nil
	}
	// runc refuses to signal a container whose init has just died; its own
	// exit then follows at once.
	select {
	case <-c.exited:
		return nil
	case <-time.After(killRaceWait):
		return err
	}
}

// killRaceWait bounds how long Kill waits for runc to exit after runc
// refused the signal.
const killRaceWait = 2 * time.Second
