package podworker

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/ray-operator/ray-operator/local/internal/sandbox"
)

// Commands run in a container (hooks, exec probes, kubectl exec) start in
// the container's working directory with its environment, as a CRI runtime
// runs them.
func TestExecRunsInTheContainersWorkingDir(t *testing.T) {
	pod := makePod(corev1.RestartPolicyAlways, nil, "main")
	c := &pod.Spec.Containers[0]
	c.WorkingDir = "/work"
	c.Lifecycle = &corev1.Lifecycle{PostStart: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"post"}}}}
	h := newHarness(t, pod)
	p := h.nextStart("main")
	if p.spec.WorkingDir != "/work" {
		t.Fatalf("container working dir = %q, want /work", p.spec.WorkingDir)
	}
	h.waitPod("started", func(p *corev1.Pod) bool { return ptr.Deref(p.Status.ContainerStatuses[0].Started, false) })
	if code, err := h.w.Exec(t.Context(), "main", sandbox.ExecSpec{Args: []string{"ls"}}); err != nil || code != 0 {
		t.Fatalf("Exec = %d, %v", code, err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	var got []sandbox.ExecSpec
	for _, e := range p.execs {
		got = append(got, sandbox.ExecSpec{Args: e.Args, Env: e.Env, WorkingDir: e.WorkingDir})
	}
	want := []sandbox.ExecSpec{
		{Args: []string{"post"}, Env: []string{"PATH=/bin"}, WorkingDir: "/work"},
		{Args: []string{"ls"}, Env: []string{"PATH=/bin"}, WorkingDir: "/work"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("exec specs (-want +got):\n%s", diff)
	}
}
