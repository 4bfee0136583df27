package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/opencontainers/cgroups"
	"github.com/opencontainers/cgroups/fscommon"
	"k8s.io/apimachinery/pkg/util/wait"
)

// The TestCgroupV2VM tests run inside the VM that local/test/cgroup2 boots
// (make test-cgroup2): a Linux kernel with cgroup2 mounted at
// /sys/fs/cgroup and nothing else, which this machine's cgroup v1 host
// cannot show. There the VM's init sets CgroupV2VMEnv; elsewhere they skip,
// and the VM test fails unless each of them passed.

// CgroupV2VMEnv is set to "1" by the VM's init.
const CgroupV2VMEnv = "RAYOP_CGROUP2_VM"

// cgroupV2VMHelperEnv makes the test binary, started again by a VM test, a
// helper process: "alloc:N" allocates and touches N MiB, prints
// "allocated" and sleeps; "spin" burns CPU. Either runs until killed.
const cgroupV2VMHelperEnv = "RAYOP_CGROUP2_VM_HELPER"

func requireCgroupV2VM(t *testing.T) {
	t.Helper()
	if os.Getenv(CgroupV2VMEnv) != "1" {
		t.Skipf("runs in the cgroup v2 VM of make test-cgroup2 (%s=1)", CgroupV2VMEnv)
	}
}

// TestCgroupV2VMHelper is the helper process's body, not a test.
func TestCgroupV2VMHelper(t *testing.T) {
	mode := os.Getenv(cgroupV2VMHelperEnv)
	switch {
	case mode == "spin":
		for x := 0; ; x++ {
			_ = x * x
		}
	case strings.HasPrefix(mode, "alloc:"):
		mib, _ := strconv.Atoi(strings.TrimPrefix(mode, "alloc:"))
		b := make([]byte, mib<<20)
		for i := range b {
			b[i] = 1
		}
		fmt.Println("allocated")
		time.Sleep(time.Hour)
		fmt.Println(b[len(b)-1])
	default:
		t.Skipf("a helper process of the cgroup v2 VM tests (%s)", cgroupV2VMHelperEnv)
	}
}

// startInCgroup starts cmd in the cgroup rel (created as runc creates a
// container's: every controller of the root enabled down to it) and
// returns the file of its combined output. A file, not a pipe: children
// left running would hold a pipe open, and cmd.Wait with it.
func startInCgroup(t *testing.T, rel string, cmd *exec.Cmd) *os.File {
	t.Helper()
	v2 := cgroupV2{root: cgroupRoot}
	for _, controller := range []string{"cpu", "memory", "pids"} {
		if _, err := v2.delegate(rel, controller); err != nil {
			t.Fatal(err)
		}
	}
	dir, err := os.Open(filepath.Join(cgroupRoot, rel))
	if err != nil {
		t.Fatal(err)
	}
	defer dir.Close()
	out, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = out.Close() })
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: int(dir.Fd())}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return out
}

// contents is what a process wrote to out so far.
func contents(out *os.File) string {
	data, _ := os.ReadFile(out.Name())
	return string(data)
}

// helper is the test binary started again as a helper process.
func helper(mode string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^TestCgroupV2VMHelper$")
	cmd.Env = append(os.Environ(), cgroupV2VMHelperEnv+"="+mode)
	return cmd
}

// removeAfter removes the cgroup tree rel (and its processes) when the
// test ends, and checks that it is gone.
func removeAfter(t *testing.T, rel string) {
	t.Cleanup(func() {
		if err := removeCgroupTree(context.Background(), rel); err != nil {
			t.Error(err)
		}
		if _, err := os.Stat(filepath.Join(cgroupRoot, rel)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("cgroup %s still there after removal: %v", rel, err)
		}
	})
}

func TestCgroupV2VMDetected(t *testing.T) {
	requireCgroupV2VM(t)
	if got, ok := hostCgroups().(cgroupV2); !ok || got.root != cgroupRoot {
		t.Fatalf("hostCgroups() = %#v; want cgroupV2 at %s", hostCgroups(), cgroupRoot)
	}
}

// A pod's CPU shares (from its requests) become its cpu.weight on the
// scale runc puts its containers' on (the library's conversion: a CPU's
// 1024 shares are v2's default weight, 100).
func TestCgroupV2VMPodCPUShares(t *testing.T) {
	requireCgroupV2VM(t)
	removeAfter(t, "rayop-vmcpu")
	for pod, c := range map[string]struct {
		shares uint64
		want   string
	}{
		"rayop-vmcpu/pod-a": {shares: 1024, want: "100"},
		"rayop-vmcpu/pod-b": {shares: 2048, want: strconv.FormatUint(cgroups.ConvertCPUSharesToCgroupV2Value(2048), 10)},
	} {
		if err := hostCgroups().limitCPUShares(pod, c.shares); err != nil {
			t.Fatal(err)
		}
		got, err := fscommon.GetCgroupParamString(filepath.Join(cgroupRoot, pod), "cpu.weight")
		if err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("%s: cpu.weight %s for %d shares, want %s", pod, got, c.shares, c.want)
		}
	}
}

// A pod's pids.max stops a shell in a container cgroup below it from
// forking past the limit.
func TestCgroupV2VMPidsLimit(t *testing.T) {
	requireCgroupV2VM(t)
	const limit = 8
	pod := "rayop-vmpids/pod-a"
	removeAfter(t, "rayop-vmpids")
	if err := makePodCgroup(pod, limit); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("/bin/sh", "-c", "i=0; while [ $i -lt 20 ]; do sleep 1000 & i=$((i+1)); done")
	out := startInCgroup(t, pod+"/c1", cmd)
	err := cmd.Wait()
	if !strings.Contains(contents(out), "can't fork") {
		t.Errorf("shell exited (%v) with %q; want a fork refused", err, contents(out))
	}
	// The kernel counts a refusal in the forking task's cgroup.
	if n, err := fscommon.GetValueByKey(filepath.Join(cgroupRoot, pod, "c1"), "pids.events", "max"); err != nil || n == 0 {
		t.Errorf("pids.events max = %d, %v; want forks refused at the limit", n, err)
	}
	dir := filepath.Join(cgroupRoot, pod)
	// The shell is gone; its sleeps, the limit less the shell, remain.
	if n, err := fscommon.GetCgroupParamUint(dir, "pids.current"); err != nil || n != limit-1 {
		t.Errorf("pids.current = %d, %v; want %d", n, err, limit-1)
	}
}

// The memory limit of the pods' parent kills a process past it in a
// container cgroup below a pod's.
func TestCgroupV2VMPodsMemoryLimit(t *testing.T) {
	requireCgroupV2VM(t)
	h := &Host{names: names{tag: "vmmem"}}
	parent := h.names.cgroupParent()
	removeAfter(t, parent)
	if err := h.LimitPodsMemory(64 << 20); err != nil {
		t.Fatal(err)
	}
	pod := h.names.podCgroup("uid-mem")
	if err := makePodCgroup(pod, 4096); err != nil {
		t.Fatal(err)
	}
	cmd := helper("alloc:200")
	out := startInCgroup(t, pod+"/c1", cmd)
	err := cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL || strings.Contains(contents(out), "allocated") {
		t.Errorf("allocating 200 MiB under 64 MiB ended with %v, output %q; want killed", err, contents(out))
	}
	if n, err := fscommon.GetValueByKey(filepath.Join(cgroupRoot, parent), "memory.events", "oom_kill"); err != nil || n == 0 {
		t.Errorf("oom_kill of %s = %d, %v; want the kill counted", parent, n, err)
	}
	if err := h.LimitPodsMemory(0); err != nil {
		t.Fatal(err)
	}
	if got, _ := fscommon.GetCgroupParamString(filepath.Join(cgroupRoot, parent), "memory.max"); got != "max" {
		t.Errorf("memory.max after LimitPodsMemory(0) = %q; want max", got)
	}
}

// A container's usage is read back: memory.current covers an allocation,
// and the CPU time grows under a busy loop.
func TestCgroupV2VMUsage(t *testing.T) {
	requireCgroupV2VM(t)
	pod := "rayop-vmusage/pod-u"
	removeAfter(t, "rayop-vmusage")
	if err := makePodCgroup(pod, 4096); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	const mib = 48
	out := startInCgroup(t, pod+"/alloc", helper("alloc:"+strconv.Itoa(mib)))
	var u Usage
	err := wait.PollUntilContextCancel(ctx, 20*time.Millisecond, true, func(context.Context) (bool, error) {
		var err error
		u, err = hostCgroups().usage(pod + "/alloc")
		return err == nil && u.RSSBytes >= mib<<20, err
	})
	if err != nil || u.MemoryBytes < mib<<20 || u.MemoryBytes > (mib+32)<<20 || u.WorkingSetBytes > u.MemoryBytes {
		t.Errorf("usage of a %d MiB allocation: %+v, %v (output %q); want memory %d..%d MiB", mib, u, err, contents(out), mib, mib+32)
	}
	startInCgroup(t, pod+"/spin", helper("spin"))
	err = wait.PollUntilContextCancel(ctx, 20*time.Millisecond, true, func(context.Context) (bool, error) {
		var err error
		u, err = hostCgroups().usage(pod + "/spin")
		return err == nil && u.CPU >= 500*time.Millisecond, err
	})
	if err != nil {
		t.Errorf("CPU time of a busy loop: %v, %v; want it past 500ms", u.CPU, err)
	}
}

// A memory limit below a cgroup that holds processes is refused, naming
// that cgroup: v2 gives a domain controller (memory) to no child of a
// non-root cgroup with processes of its own, as a node started inside a
// container's cgroup namespace would meet.
func TestCgroupV2VMRefusesBelowAProcess(t *testing.T) {
	requireCgroupV2VM(t)
	busy := "rayop-vmbusy"
	removeAfter(t, busy)
	startInCgroup(t, busy, exec.Command("/bin/sleep", "1000"))
	err := hostCgroups().limitMemory(busy+"/pods", 64<<20)
	if want := "cgroup " + filepath.Join(cgroupRoot, busy) + " holds processes"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("limitMemory below a cgroup with a process: %v; want an error saying %q", err, want)
	}
}

// runc, given the runtime spec the sandbox builds (cgroupsPath below the
// pod's cgroup, memory and CPU limits, /sys/fs/cgroup of type cgroup, a
// user namespace), runs containers on v2: the pod's pids.max bounds a container's forks, runc's
// memory.max from the container's limit kills an allocation past it, and
// the usage of a running container is read back from the cgroup runc made.
func TestCgroupV2VMRunc(t *testing.T) {
	requireCgroupV2VM(t)
	pod := "rayop-vmrunc/pod-r"
	removeAfter(t, "rayop-vmrunc")
	if err := makePodCgroup(pod, 12); err != nil {
		t.Fatal(err)
	}
	rootfs := guestRootfs(t)
	t.Run("pids.max of the pod", func(t *testing.T) {
		out, err := runcRun(t, rootfs, pod, "forks", false, ContainerSpec{Args: []string{"/bin/sh", "-c", forkLoop(40)}})
		if !strings.Contains(out, "can't fork") || !strings.Contains(out, "/"+pod+"/forks") {
			t.Errorf("runc run: %v, output %q; want a fork refused in %s/forks", err, out, pod)
		}
	})
	t.Run("memory limit", func(t *testing.T) {
		out, err := runcRun(t, rootfs, pod, "hog", false, helperSpec("alloc:100", 32<<20))
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 137 || strings.Contains(out, "allocated") {
			t.Errorf("allocating 100 MiB under a 32 MiB limit: %v, output %q; want killed (137)", err, out)
		}
	})
	t.Run("usage", func(t *testing.T) {
		spec := helperSpec("alloc:16", 64<<20)
		spec.CPUMillis = 500
		if out, err := runcRun(t, rootfs, pod, "usage", true, spec); err != nil {
			t.Fatalf("runc run -d: %v, %q", err, out)
		}
		dir := filepath.Join(cgroupRoot, pod, "usage")
		for file, want := range map[string]string{"memory.max": "67108864", "cpu.max": "50000 100000"} {
			if got, err := fscommon.GetCgroupParamString(dir, file); err != nil || got != want {
				t.Errorf("%s = %q, %v; want %q", file, got, err, want)
			}
		}
		var u Usage
		err := wait.PollUntilContextTimeout(t.Context(), 20*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
			var err error
			u, err = hostCgroups().usage(pod + "/usage")
			return err == nil && u.RSSBytes >= 16<<20, err
		})
		if err != nil || u.MemoryBytes < 16<<20 || u.MemoryBytes > 48<<20 || u.CPU == 0 {
			t.Errorf("usage of a container holding 16 MiB: %+v, %v; want 16..48 MiB and some CPU", u, err)
		}
	})
}

// forkLoop is a shell script that starts n sleeps in the background.
func forkLoop(n int) string {
	return fmt.Sprintf("cat /proc/self/cgroup; i=0; while [ $i -lt %d ]; do sleep 1000 & i=$((i+1)); done", n)
}

// helperSpec runs this test binary, copied into the container's root, as a
// helper process with a memory limit.
func helperSpec(mode string, memory int64) ContainerSpec {
	return ContainerSpec{
		Args:             []string{"/sandbox.test", "-test.run=^TestCgroupV2VMHelper$"},
		Env:              []string{"PATH=/bin", cgroupV2VMHelperEnv + "=" + mode},
		MemoryLimitBytes: memory,
	}
}

// vmContainerIDs is the user namespace of the VM tests' containers.
var vmContainerIDs = idMap{base: userNSBase, mapped: true}

// guestRootfs is a container root with busybox and this test binary.
func guestRootfs(t *testing.T) string {
	t.Helper()
	rootfs := openDir(t)
	if err := os.MkdirAll(filepath.Join(rootfs, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	copies := map[string]string{"/bin/busybox": "bin/busybox", os.Args[0]: "sandbox.test"}
	for from, to := range copies {
		data, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(rootfs, to), data, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, applet := range []string{"sh", "sleep", "cat"} {
		if err := os.Symlink("busybox", filepath.Join(rootfs, "bin", applet)); err != nil {
			t.Fatal(err)
		}
	}
	// runc makes the mount points in it as the container's root.
	if err := vmContainerIDs.chownToRoot(rootfs); err != nil {
		t.Fatal(err)
	}
	return rootfs
}

// openDir is a temporary directory that the container's root, an
// unprivileged host user in its user namespace, may pass.
func openDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "vmrunc")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// runcRun writes the bundle of a container id in the pod's cgroup, in a
// user namespace of its own as the node's pods, and runs it with runc to its end (detach: until it started; the test
// deletes it) and returns its output.
func runcRun(t *testing.T, rootfs, pod, id string, detach bool, c ContainerSpec) (string, error) {
	t.Helper()
	c.Name = id
	if c.Env == nil {
		c.Env = []string{"PATH=/bin"}
	}
	dir := openDir(t)
	facts := containerFacts{
		RootfsPath:   rootfs,
		IDs:          vmContainerIDs,
		Hostname:     id,
		ShmDir:       dir,
		ResolvConf:   filepath.Join(dir, "resolv.conf"),
		Hosts:        filepath.Join(dir, "hosts"),
		HostnameFile: filepath.Join(dir, "hostname"),
		Profile:      filepath.Join(dir, "profile"),
		CgroupsPath:  "/" + pod + "/" + id,
		NofileLimit:  1024,
	}
	for _, f := range []string{facts.ResolvConf, facts.Hosts, facts.HostnameFile, facts.Profile} {
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	spec, err := runtimeSpec(c, facts)
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"--root", "/run/runc", "run", "--bundle", dir}
	if detach {
		args = append(args, "--detach")
		t.Cleanup(func() { _ = exec.Command("runc", "--root", "/run/runc", "delete", "--force", id).Run() })
	}
	out, err := os.CreateTemp(dir, "out")
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	cmd := exec.Command("runc", append(args, id)...)
	cmd.Stdout, cmd.Stderr = out, out
	err = cmd.Run()
	return contents(out), err
}
