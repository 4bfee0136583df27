package testenv

import (
	"context"
	"fmt"
	"hash/fnv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// MarkPodsRunningReady makes pods look like a kubelet runs them: phase
// Running, conditions PodScheduled, Initialized, ContainersReady and Ready
// True, a PodIP and HostIP, and every container running and ready. In a bare
// API server nothing else does. Each pod is updated in place to the stored
// object.
func MarkPodsRunningReady(ctx context.Context, c client.Client, pods ...*corev1.Pod) error {
	for _, pod := range pods {
		if err := UpdatePodStatus(ctx, c, pod, setRunningReady); err != nil {
			return err
		}
	}
	return nil
}

// UpdatePodStatus applies mutate to the pod's latest status and writes it
// through the status subresource, retrying on conflicts. pod is updated in
// place to the stored object.
func UpdatePodStatus(ctx context.Context, c client.Client, pod *corev1.Pod, mutate func(*corev1.Pod)) error {
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(pod), pod); err != nil {
			return err
		}
		mutate(pod)
		return c.Status().Update(ctx, pod)
	})
	if err != nil {
		return fmt.Errorf("updating status of pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	return nil
}

// TerminateContainer makes one container of a pod look as a kubelet
// reports it once the container exited with exitCode at `at`: terminated
// (reason Completed or Error), not ready, and the pod's ContainersReady and
// Ready conditions False. The phase stays as it was: with other containers
// running, the pod is still Running. pod is updated in place to the stored
// object.
func TerminateContainer(ctx context.Context, c client.Client, pod *corev1.Pod, container string, exitCode int32, at time.Time) error {
	return UpdatePodStatus(ctx, c, pod, func(p *corev1.Pod) { setTerminated(p, container, exitCode, metav1.NewTime(at)) })
}

// setTerminated records the exit of container at now.
func setTerminated(pod *corev1.Pod, container string, exitCode int32, now metav1.Time) {
	reason := "Completed"
	if exitCode != 0 {
		reason = "Error"
	}
	status := &pod.Status
	i := 0
	for i < len(status.ContainerStatuses) && status.ContainerStatuses[i].Name != container {
		i++
	}
	if i == len(status.ContainerStatuses) {
		status.ContainerStatuses = append(status.ContainerStatuses, corev1.ContainerStatus{Name: container})
	}
	cs := &status.ContainerStatuses[i]
	started := now
	if cs.State.Running != nil {
		started = cs.State.Running.StartedAt
	}
	for _, spec := range pod.Spec.Containers {
		if spec.Name == container && cs.Image == "" {
			cs.Image, cs.ImageID = spec.Image, spec.Image
		}
	}
	cs.Ready, cs.Started = false, new(false)
	cs.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
		ExitCode: exitCode, Reason: reason, StartedAt: started, FinishedAt: now,
	}}
	for j := range status.Conditions {
		if t := status.Conditions[j].Type; (t == corev1.ContainersReady || t == corev1.PodReady) && status.Conditions[j].Status != corev1.ConditionFalse {
			status.Conditions[j].Status, status.Conditions[j].LastTransitionTime = corev1.ConditionFalse, now
		}
	}
}

// setRunningReady is the status a kubelet reports for a healthy pod.
func setRunningReady(pod *corev1.Pod) {
	now := metav1.Now()
	status := &pod.Status
	status.Phase = corev1.PodRunning
	if status.PodIP == "" {
		status.PodIP = podIP(pod)
		status.PodIPs = []corev1.PodIP{{IP: status.PodIP}}
	}
	if status.HostIP == "" {
		status.HostIP = "10.0.0.1"
		status.HostIPs = []corev1.HostIP{{IP: status.HostIP}}
	}
	if status.StartTime == nil {
		status.StartTime = &now
	}
	for _, t := range []corev1.PodConditionType{
		corev1.PodScheduled, corev1.PodInitialized, corev1.ContainersReady, corev1.PodReady,
	} {
		setPodCondition(status, t, now)
	}
	status.ContainerStatuses = runningContainers(pod.Spec.Containers, now)
}

// setPodCondition sets condition t to True, keeping its transition time
// when it already was.
func setPodCondition(status *corev1.PodStatus, t corev1.PodConditionType, now metav1.Time) {
	for i := range status.Conditions {
		if status.Conditions[i].Type == t {
			if status.Conditions[i].Status != corev1.ConditionTrue {
				status.Conditions[i].Status = corev1.ConditionTrue
				status.Conditions[i].LastTransitionTime = now
			}
			return
		}
	}
	status.Conditions = append(status.Conditions, corev1.PodCondition{
		Type: t, Status: corev1.ConditionTrue, LastTransitionTime: now,
	})
}

// runningContainers reports every container as started, running and ready.
func runningContainers(containers []corev1.Container, now metav1.Time) []corev1.ContainerStatus {
	started := true
	statuses := make([]corev1.ContainerStatus, 0, len(containers))
	for _, c := range containers {
		statuses = append(statuses, corev1.ContainerStatus{
			Name:    c.Name,
			Image:   c.Image,
			ImageID: c.Image,
			Ready:   true,
			Started: &started,
			State:   corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}},
		})
	}
	return statuses
}

// podIP derives a stable address in 10.244.0.0/16 from the pod's namespace
// and name, so repeated runs give a pod the same IP.
func podIP(pod *corev1.Pod) string {
	h := fnv.New32a()
	_, _ = h.Write([]byte(pod.Namespace + "/" + pod.Name))
	sum := h.Sum32()
	return fmt.Sprintf("10.244.%d.%d", (sum>>8)%256, sum%254+1)
}
