package podworker

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/ray-operator/ray-operator/local/internal/hostaccess"
)

func TestRefusedPodFailsWithoutRunning(t *testing.T) {
	pod := makePod(corev1.RestartPolicyAlways, []corev1.Container{initCtr("init", false)}, "main")
	pod.Spec.HostNetwork = true
	pod.Spec.Containers[0].Image = "nginx" // no image events either: admission comes first
	scheduled := corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(t0)}
	pod.Status.Conditions = []corev1.PodCondition{scheduled}
	h := newHarness(t, pod)

	got := h.waitPod("Failed", phaseIs(corev1.PodFailed))
	message := "the pod needs root on the host: spec.hostNetwork: true; the node runs such pods only when started with --allow-host-privileges"
	want := corev1.PodStatus{
		Phase:      corev1.PodFailed,
		Reason:     hostaccess.ReasonHostPrivileges,
		Message:    message,
		QOSClass:   corev1.PodQOSBestEffort,
		Conditions: []corev1.PodCondition{scheduled},
	}
	if diff := cmp.Diff(want, got.Status); diff != "" {
		t.Errorf("status (-want +got):\n%s", diff)
	}

	// Nothing retries it: time passing starts nothing, and its deletion
	// finds nothing to stop.
	h.clk.Step(time.Hour)
	h.w.RequestDelete(ptr.To[int64](0))
	final := <-h.finalized
	if diff := cmp.Diff(want, final.Status); diff != "" {
		t.Errorf("status at deletion (-want +got):\n%s", diff)
	}
	h.noStart()
	h.rt.mu.Lock()
	boxes := len(h.rt.boxes)
	h.rt.mu.Unlock()
	if boxes != 0 {
		t.Errorf("%d sandboxes created for a refused pod", boxes)
	}
	close(h.rec.Events)
	var events []string
	for ev := range h.rec.Events {
		events = append(events, ev)
	}
	if diff := cmp.Diff([]string{"Warning HostPrivilegesForbidden " + message}, events); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

func TestAdmittedPodsSandboxUsers(t *testing.T) {
	shared := t.TempDir()
	cases := map[string]struct {
		pod        func(*corev1.Pod)
		allowHost  bool
		sharedDirs []string
		hostUsers  bool
	}{
		"plain pod: a user namespace": {pod: func(*corev1.Pod) {}},
		"privileged, host privileges allowed: the host's users": {
			pod: func(p *corev1.Pod) {
				p.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: ptr.To(true)}
			},
			allowHost: true, hostUsers: true,
		},
		"plain pod on a node that allows host privileges: a user namespace": {pod: func(*corev1.Pod) {}, allowHost: true},
		"hostPath in a shared directory: still a user namespace": {
			pod: func(p *corev1.Pod) {
				p.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: shared + "/data"}}}}
			},
			sharedDirs: []string{shared},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			pod := makePod(corev1.RestartPolicyAlways, nil, "main")
			tc.pod(pod)
			policy, err := hostaccess.NewPolicy(tc.allowHost, tc.sharedDirs)
			if err != nil {
				t.Fatal(err)
			}
			h := newHarness(t, pod, func(h *harness) { h.deps.HostAccess = policy })
			h.nextStart("main")
			h.rt.mu.Lock()
			spec := h.rt.boxes[0].spec
			h.rt.mu.Unlock()
			if spec.HostUsers != tc.hostUsers {
				t.Errorf("sandbox HostUsers = %t, want %t", spec.HostUsers, tc.hostUsers)
			}
		})
	}
}
