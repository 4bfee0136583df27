package podworker

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/ray-operator/ray-operator/local/internal/podinputs"
	"github.com/ray-operator/ray-operator/local/internal/sandbox"
)

// fakeRuntime hands out in-memory sandboxes whose processes the test ends.
type fakeRuntime struct {
	t     *testing.T
	clk   *clocktesting.FakeClock
	mu    sync.Mutex
	boxes []*fakeSandbox
	// starts receives every process started, in order.
	starts chan *fakeProc
	// adopt are the attempts a pod UID's sandbox holds when created (an
	// adopted sandbox).
	adopt map[string][]Adoptee
}

func (r *fakeRuntime) CreateSandbox(_ context.Context, spec sandbox.SandboxSpec) (Sandbox, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	sb := &fakeSandbox{rt: r, dir: r.t.TempDir(), spec: spec, adopted: r.adopt[spec.UID]}
	r.boxes = append(r.boxes, sb)
	return sb, nil
}

type fakeSandbox struct {
	rt        *fakeRuntime
	dir       string
	spec      sandbox.SandboxSpec
	adopted   []Adoptee
	mu        sync.Mutex
	destroyed bool
}

func (s *fakeSandbox) IP() netip.Addr { return netip.MustParseAddr("127.0.0.1") }
func (s *fakeSandbox) Dir() string    { return s.dir }
func (s *fakeSandbox) HostIDs(uid, gid uint32) (int, int) {
	return int(uid), int(gid)
}
func (s *fakeSandbox) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	var d net.Dialer
	return d.DialContext(ctx, network, address)
}
func (s *fakeSandbox) Start(_ context.Context, spec sandbox.ContainerSpec) (Process, error) {
	p := &fakeProc{spec: spec, clk: s.rt.clk, started: s.rt.clk.Now(), done: make(chan struct{})}
	p.writable = filepath.Join(s.dir, "containers", p.ID(), "upper")
	if err := os.MkdirAll(p.writable, 0o755); err != nil {
		return nil, err
	}
	s.rt.starts <- p
	return p, nil
}
func (s *fakeSandbox) Adopted() []Adoptee { return s.adopted }
func (s *fakeSandbox) Destroy(context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.destroyed = true
	return nil
}

// fakeProc is a container attempt; the test ends it with exit.
type fakeProc struct {
	spec     sandbox.ContainerSpec
	clk      *clocktesting.FakeClock
	started  time.Time
	mu       sync.Mutex
	finished time.Time
	code     int
	signals  []syscall.Signal
	// calls logs Exec and Signal calls in order ("exec pre", "signal terminated").
	calls []string
	done  chan struct{}
	// ignoreTerm keeps it running on SIGTERM (else it exits 143).
	ignoreTerm bool
	// execs are the specs of Exec calls, in order.
	execs []sandbox.ExecSpec
	// execCode is the exit code of exec'd commands.
	execCode int
	// usage is what Usage returns.
	usage sandbox.Usage
	// writable is its writable layer's directory.
	writable string
	// reopened counts ReopenLog calls.
	reopened int
}

func (p *fakeProc) WritableDir() string { return p.writable }

// ReopenLog starts a new empty file at logPath, as conmon does.
func (p *fakeProc) ReopenLog(logPath string) error {
	p.mu.Lock()
	p.reopened++
	p.mu.Unlock()
	return os.WriteFile(logPath, nil, 0o644)
}

func (p *fakeProc) Usage() (sandbox.Usage, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.usage, nil
}

func (p *fakeProc) ID() string            { return fmt.Sprintf("%s-%d", p.spec.Name, p.spec.Attempt) }
func (p *fakeProc) Name() string          { return p.spec.Name }
func (p *fakeProc) Attempt() int          { return p.spec.Attempt }
func (p *fakeProc) Done() <-chan struct{} { return p.done }
func (p *fakeProc) ExitCode() int         { p.mu.Lock(); defer p.mu.Unlock(); return p.code }
func (p *fakeProc) StartedAt() time.Time  { return p.started }
func (p *fakeProc) FinishedAt() time.Time { p.mu.Lock(); defer p.mu.Unlock(); return p.finished }

func (p *fakeProc) exit(code int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.done:
		return
	default:
	}
	p.code, p.finished = code, p.clk.Now()
	close(p.done)
}

func (p *fakeProc) Signal(sig syscall.Signal) error {
	p.mu.Lock()
	p.signals = append(p.signals, sig)
	p.calls = append(p.calls, "signal "+sig.String())
	ignore := p.ignoreTerm
	p.mu.Unlock()
	if !ignore {
		p.exit(128 + int(sig))
	}
	return nil
}

func (p *fakeProc) Kill() error { p.exit(137); return nil }

// Exec fails "false" and runs anything else with execCode.
func (p *fakeProc) Exec(_ context.Context, spec sandbox.ExecSpec) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls = append(p.calls, "exec "+strings.Join(spec.Args, " "))
	p.execs = append(p.execs, spec)
	if len(spec.Args) > 0 && spec.Args[0] == "false" {
		return 1, nil
	}
	return p.execCode, nil
}

// Attach has nothing to stream: it returns at once.
func (p *fakeProc) Attach(context.Context, sandbox.AttachSpec) error { return nil }

// fakeInputs knows the images in images; those in toPull need a pull,
// which ends with what the test sends on pulls. Containers named in
// configErr miss a Secret.
type fakeInputs struct {
	mu        sync.Mutex
	images    map[string]string
	toPull    map[string]string
	pulls     chan error
	configErr map[string]string
	stored    map[string]string
}

// registryPrefix marks the references fakeInputs treats as registry
// images; stored holds those the node's store has, with their roots.
const registryPrefix = "registry.test/"

func (in *fakeInputs) Image(ref string) (Image, error) {
	if strings.HasPrefix(ref, registryPrefix) {
		in.mu.Lock()
		defer in.mu.Unlock()
		root := in.stored[ref]
		img := Image{Image: podinputs.Image{Ref: ref, Local: "store", Registry: true, RootFS: root}, ID: ref + "@sha256:1"}
		if strings.Contains(ref, "/mapped") { // a rule maps it too
			img.Offline = &podinputs.Image{Ref: ref, Local: "offline", Cmd: []string{"/bin/offline"}}
		}
		return img, nil
	}
	if release, ok := in.toPull[ref]; ok {
		return Image{Image: podinputs.Image{Ref: ref, Local: "not installed", RayRelease: release}, ID: "local://" + ref}, nil
	}
	local, ok := in.images[ref]
	if !ok {
		return Image{}, fmt.Errorf("image %q has no local equivalent", ref)
	}
	return Image{Image: podinputs.Image{Ref: ref, Local: local}, ID: "local://" + local}, nil
}

func (in *fakeInputs) Pull(ctx context.Context, _ *corev1.Pod, img Image) (Image, error) {
	select {
	case err := <-in.pulls:
		if err != nil {
			return Image{}, err
		}
		if img.Registry {
			in.mu.Lock()
			defer in.mu.Unlock()
			img.RootFS = "/store/" + img.Ref
			in.stored[img.Ref] = img.RootFS
			return img, nil
		}
		img.RayRelease, img.Local = "", "/venv-"+img.RayRelease
		return img, nil
	case <-ctx.Done():
		return Image{}, ctx.Err()
	}
}

func (in *fakeInputs) Volumes(context.Context, *corev1.Pod, string, podinputs.PodFacts) (Volumes, error) {
	return fakeVolumes{}, nil
}

func (in *fakeInputs) Container(_ context.Context, _ *corev1.Pod, c *corev1.Container, _ Image, vols Volumes, _ podinputs.PodFacts) (ContainerInputs, error) {
	if vols == nil {
		// The node's inputs mount the pod's volumes: they need them.
		panic("Inputs.Container without the pod's volumes")
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if msg, ok := in.configErr[c.Name]; ok {
		return ContainerInputs{}, &podinputs.ConfigError{Reason: podinputs.ReasonCreateContainerConfigError, Message: msg}
	}
	return ContainerInputs{Args: append(append([]string(nil), c.Command...), c.Args...), Env: []string{"PATH=/bin"}}, nil
}

type fakeVolumes struct{}

func (fakeVolumes) Mounts(*corev1.Container, []string) ([]sandbox.Mount, error)    { return nil, nil }
func (fakeVolumes) Refresh(context.Context, *corev1.Pod, podinputs.PodFacts) error { return nil }
func (fakeVolumes) Release() error                                                 { return nil }

// harness runs one pod worker on fakes and a fake clock.
type harness struct {
	t         *testing.T
	clk       *clocktesting.FakeClock
	rt        *fakeRuntime
	in        *fakeInputs
	rec       *record.FakeRecorder
	deps      *Deps
	pods      chan *corev1.Pod
	finalized chan *corev1.Pod
	w         *Worker
	cancel    context.CancelFunc
	// deletedFirst makes the worker get RequestDelete(grace) before Start.
	deletedFirst bool
	grace        *int64
}

var t0 = time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)

// newHarness starts a worker for pod; prepare, if given, adjusts the fakes
// and deps before it starts.
func newHarness(t *testing.T, pod *corev1.Pod, prepare ...func(*harness)) *harness {
	t.Helper()
	clk := clocktesting.NewFakeClock(t0)
	h := &harness{
		t: t, clk: clk,
		rt:        &fakeRuntime{t: t, clk: clk, starts: make(chan *fakeProc, 100)},
		in:        &fakeInputs{images: map[string]string{"rayproject/ray:2.60.0": "/venv", "busybox": "/bin"}, toPull: map[string]string{"rayproject/ray:2.41.0": "2.41.0"}, pulls: make(chan error), configErr: map[string]string{}, stored: map[string]string{}},
		rec:       record.NewFakeRecorder(1000),
		pods:      make(chan *corev1.Pod, 1000),
		finalized: make(chan *corev1.Pod, 1),
	}
	deps := &Deps{
		Runtime: h.rt, Inputs: h.in, Clock: clk, Recorder: h.rec, Log: logr.Discard(),
		Node:     NodeInfo{Name: "ray-local", HostIP: netip.MustParseAddr("10.244.0.1"), ClusterDNS: []string{"10.96.0.10"}, ClusterDomain: "cluster.local"},
		Notify:   func(p *corev1.Pod) { h.pods <- p },
		Finalize: func(_ context.Context, p *corev1.Pod) { h.finalized <- p },
	}
	h.deps = deps
	for _, f := range prepare {
		f(h)
	}
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	h.w = New(deps, pod)
	if h.deletedFirst {
		h.w.RequestDelete(h.grace)
	}
	h.w.Start(ctx)
	t.Cleanup(func() {
		cancel()
		h.w.Wait()
	})
	return h
}

// waitPod returns the first published pod for which ok holds.
func (h *harness) waitPod(what string, ok func(*corev1.Pod) bool) *corev1.Pod {
	h.t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case p := <-h.pods:
			if ok(p) {
				return p
			}
		case <-deadline:
			h.t.Fatalf("timed out waiting for %s; last published: %+v", what, h.w.Published())
		}
	}
}

// nextStart returns the next process the worker starts.
func (h *harness) nextStart(name string) *fakeProc {
	h.t.Helper()
	select {
	case p := <-h.rt.starts:
		if p.spec.Name != name {
			h.t.Fatalf("started %s attempt %d, want %s", p.spec.Name, p.spec.Attempt, name)
		}
		return p
	case <-time.After(10 * time.Second):
		h.t.Fatalf("timed out waiting for %s to start", name)
		return nil
	}
}

// noStart checks that nothing started.
func (h *harness) noStart() {
	h.t.Helper()
	select {
	case p := <-h.rt.starts:
		h.t.Fatalf("unexpected start of %s attempt %d", p.spec.Name, p.spec.Attempt)
	default:
	}
}

// waitTimers waits until the worker (and its probes) wait on n timers.
func (h *harness) waitTimers(n int) {
	h.t.Helper()
	err := wait.PollUntilContextTimeout(h.t.Context(), time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return h.clk.Waiters() >= n, nil
	})
	if err != nil {
		h.t.Fatalf("timed out waiting for %d clock waiters (have %d)", n, h.clk.Waiters())
	}
}

// waitEvent returns the first recorded event with prefix.
func (h *harness) waitEvent(prefix string) string {
	h.t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case ev := <-h.rec.Events:
			if strings.HasPrefix(ev, prefix) {
				return ev
			}
		case <-deadline:
			h.t.Fatalf("timed out waiting for an event %q", prefix)
			return ""
		}
	}
}

// condition returns the pod's condition of type t (zero when absent).
func condition(p *corev1.Pod, t corev1.PodConditionType) corev1.PodCondition {
	if c := findCondition(p.Status.Conditions, t); c != nil {
		return *c
	}
	return corev1.PodCondition{}
}
