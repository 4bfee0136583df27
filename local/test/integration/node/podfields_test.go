package node_test

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// readyCondition returns the pod's Ready condition (zero when absent).
func readyCondition(p *corev1.Pod) corev1.PodCondition {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c
		}
	}
	return corev1.PodCondition{}
}

// testReadinessGates sets a readiness gate's condition through the status
// API, as a load-balancer controller would, and watches Ready follow it.
func testReadinessGates(t *testing.T, c *cluster) {
	const gate = "example.com/lb"
	pod := sleepPod("gated", "exec sleep 1000")
	pod.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: gate}}
	got := createAndWait(t, c, pod, "containers ready, gate unmet", func(p *corev1.Pod) bool {
		r := readyCondition(p)
		return len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].Ready && r.Reason == "ReadinessGatesNotReady"
	})
	if r := readyCondition(got); r.Status != corev1.ConditionFalse || r.Message != `corresponding condition of pod readiness gate "example.com/lb" does not exist.` {
		t.Errorf("Ready = %+v", r)
	}
	for _, status := range []corev1.ConditionStatus{corev1.ConditionTrue, corev1.ConditionFalse, corev1.ConditionTrue} {
		patch := fmt.Sprintf(`{"status":{"conditions":[{"type":%q,"status":%q}]}}`, gate, status)
		if _, err := c.cs.CoreV1().Pods(namespace).Patch(t.Context(), "gated", types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}, "status"); err != nil {
			t.Fatalf("setting the gate's condition: %v", err)
		}
		got = waitPod(t, c, "gated", "Ready "+string(status), func(p *corev1.Pod) bool { return readyCondition(p).Status == status })
		found := false
		for _, cond := range got.Status.Conditions {
			found = found || (cond.Type == gate && cond.Status == status)
		}
		if !found {
			t.Errorf("the gate's condition %s is gone: %+v", status, got.Status.Conditions)
		}
	}
	deleteAndWait(t, c, "gated")
}

// testActiveDeadline lowers a running pod's activeDeadlineSeconds: the node
// kills it and fails it with reason DeadlineExceeded.
func testActiveDeadline(t *testing.T, c *cluster) {
	pod := sleepPod("deadline", "exec sleep 1000")
	pod.Spec.ActiveDeadlineSeconds = ptr.To[int64](3600)
	pod.Spec.TerminationGracePeriodSeconds = ptr.To[int64](1)
	createAndWait(t, c, pod, "Running", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })
	patch := []byte(`{"spec":{"activeDeadlineSeconds":1}}`)
	if _, err := c.cs.CoreV1().Pods(namespace).Patch(t.Context(), "deadline", types.StrategicMergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatalf("lowering the deadline: %v", err)
	}
	got := waitPod(t, c, "deadline", "Failed", func(p *corev1.Pod) bool {
		return p.Status.Phase == corev1.PodFailed && len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].State.Terminated != nil
	})
	if got.Status.Reason != "DeadlineExceeded" || got.Status.Message != "Pod was active on the node longer than the specified deadline" {
		t.Errorf("reason, message = %q, %q", got.Status.Reason, got.Status.Message)
	}
	if st := got.Status.ContainerStatuses[0]; st.RestartCount != 0 || st.State.Terminated.ExitCode == 0 {
		t.Errorf("container %+v, want killed, not restarted", st)
	}
	deleteAndWait(t, c, "deadline")
}

// testImageChange changes a running container's image: it restarts with
// the new one.
func testImageChange(t *testing.T, c *cluster) {
	pod := sleepPod("image", "exec sleep 1000")
	pod.Spec.TerminationGracePeriodSeconds = ptr.To[int64](1)
	createAndWait(t, c, pod, "Running", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })
	const image = "rayproject/ray-ml:2.60.0"
	patch := fmt.Appendf(nil, `{"spec":{"containers":[{"name":"main","image":%q}]}}`, image)
	if _, err := c.cs.CoreV1().Pods(namespace).Patch(t.Context(), "image", types.StrategicMergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatalf("changing the image: %v", err)
	}
	got := waitPod(t, c, "image", "restarted with the new image", func(p *corev1.Pod) bool {
		st := p.Status.ContainerStatuses
		return len(st) == 1 && st[0].RestartCount == 1 && st[0].State.Running != nil
	})
	if st := got.Status.ContainerStatuses[0]; st.Image != image || st.LastTerminationState.Terminated == nil {
		t.Errorf("container %+v, want image %s and the killed attempt as lastState", st, image)
	}
	deleteAndWait(t, c, "image")
}

// testContainerRestartPolicy: in a pod whose restartPolicy is Never, a
// container with restartPolicy OnFailure that exits 3 is restarted once
// (its emptyDir remembers the first attempt) and, after it exits 0, not
// again: the pod succeeds with restartCount 1 and lastState exit 3.
func testContainerRestartPolicy(t *testing.T, c *cluster) {
	pod := sleepPod("onfailure", "if [ -e /data/ran ]; then exit 0; fi; touch /data/ran; exit 3")
	pod.Spec.RestartPolicy = corev1.RestartPolicyNever
	pod.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	main := &pod.Spec.Containers[0]
	main.RestartPolicy = ptr.To(corev1.ContainerRestartPolicyOnFailure)
	main.VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}
	got := createAndWait(t, c, pod, "Succeeded", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodSucceeded })
	st := got.Status.ContainerStatuses[0]
	if st.RestartCount != 1 || st.State.Terminated == nil || st.State.Terminated.ExitCode != 0 ||
		st.LastTerminationState.Terminated == nil || st.LastTerminationState.Terminated.ExitCode != 3 {
		t.Errorf("container status %+v, want restartCount 1, exit 0, lastState exit 3", st)
	}
	deleteAndWait(t, c, "onfailure")
}
