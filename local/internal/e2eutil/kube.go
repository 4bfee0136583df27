package e2eutil

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/testing/kubectl"
)

// Kube is a suite's access to its local cluster: a client, a clientset
// (for logs) and the kubeconfig (for the real kubectl).
type Kube struct {
	Client     client.Client
	Clientset  kubernetes.Interface
	Kubeconfig string
}

// Kubectl runs kubectl against the cluster and returns what it printed on
// stdout; the error carries its stderr.
func (k Kube) Kubectl(ctx context.Context, args ...string) (string, error) {
	return kubectl.Run(ctx, k.Kubeconfig, args...)
}

// RayPython runs a Python script with the Ray image's python in container
// of pod (kubectl exec), as a user attaches to a cluster.
func (k Kube) RayPython(ctx context.Context, ns, pod, container, script string) (string, error) {
	return k.Kubectl(ctx, "exec", "-n", ns, pod, "-c", container, "--", "python", "-c", script)
}

// RetryPython runs a script as RayPython does until it succeeds (a
// restarted GCS takes a while to answer) or timeout passes, and returns
// what it printed.
func (k Kube) RetryPython(ctx context.Context, t testing.TB, ns, pod, container, script string, timeout time.Duration) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var out string
	err := Poll(ctx, PollInterval, func() (bool, error) {
		var err error
		out, err = k.RayPython(ctx, ns, pod, container, script)
		return err == nil, err
	})
	if err != nil {
		t.Fatalf("running a script in %s: %v", pod, err)
	}
	return out
}

// RayPods lists the Pods of a RayCluster of one node type (head or worker).
func (k Kube) RayPods(ctx context.Context, ns, cluster, nodeType string) ([]corev1.Pod, error) {
	pods := &corev1.PodList{}
	err := k.Client.List(ctx, pods, client.InNamespace(ns), client.MatchingLabels{rayv1.LabelCluster: cluster, rayv1.LabelNodeType: nodeType})
	return pods.Items, err
}

// RunningAndReady tells whether a pod runs with every container ready.
func RunningAndReady(p *corev1.Pod) bool {
	if p.Status.Phase != corev1.PodRunning || p.DeletionTimestamp != nil {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// Restarts is the sum of a Pod's containers' restart counts.
func Restarts(p *corev1.Pod) int32 {
	var n int32
	for _, c := range p.Status.ContainerStatuses {
		n += c.RestartCount
	}
	return n
}

// WaitHead waits up to timeout until the cluster has one running and ready
// head Pod other than previous (a Pod name, or "") and returns its name.
func (k Kube) WaitHead(ctx context.Context, t testing.TB, ns, cluster, previous string, timeout time.Duration) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var name string
	err := Poll(ctx, PollInterval, func() (bool, error) {
		pods, err := k.RayPods(ctx, ns, cluster, string(rayv1.HeadNode))
		if err != nil {
			return false, err
		}
		for i := range pods {
			if pods[i].Name != previous && RunningAndReady(&pods[i]) {
				name = pods[i].Name
				return true, nil
			}
		}
		return false, fmt.Errorf("%d head Pods, none new, running and ready", len(pods))
	})
	if err != nil {
		t.Fatalf("RayCluster %s has no ready head: %v", cluster, err)
	}
	return name
}

// WaitWorkerGroup waits up to timeout until the cluster's worker group
// group (its first, when "") asks for replicas workers and has exactly that
// many Pods, all running and ready (none at all for zero), and returns the
// name of one of them ("" for zero).
func (k Kube) WaitWorkerGroup(ctx context.Context, t testing.TB, ns, cluster, group string, replicas int32, timeout time.Duration) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var name string
	err := Poll(ctx, PollInterval, func() (bool, error) {
		rc := &rayv1.RayCluster{}
		if err := k.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: cluster}, rc); err != nil {
			return false, err
		}
		spec := workerGroup(rc, group)
		if spec == nil {
			return false, fmt.Errorf("no worker group %q", group)
		}
		pods, err := k.RayPods(ctx, ns, cluster, string(rayv1.WorkerNode))
		if err != nil {
			return false, err
		}
		n, ready := 0, 0
		name = ""
		for i := range pods {
			if pods[i].Labels[rayv1.LabelGroup] != spec.GroupName {
				continue
			}
			n++
			if RunningAndReady(&pods[i]) {
				ready++
				name = pods[i].Name
			}
		}
		want := ptr.Deref(spec.Replicas, -1)
		ok := want == replicas && n == int(replicas) && ready == int(replicas)
		return ok, fmt.Errorf("group %s: spec replicas %d (-1: unset), %d worker Pods, %d ready", spec.GroupName, want, n, ready)
	})
	if err != nil {
		t.Fatalf("worker group of %s did not reach %d replicas: %v", cluster, replicas, err)
	}
	return name
}

// workerGroup is the cluster's worker group called name, its first when
// name is "", or nil.
func workerGroup(rc *rayv1.RayCluster, name string) *rayv1.WorkerGroupSpec {
	for i := range rc.Spec.WorkerGroupSpecs {
		if name == "" || rc.Spec.WorkerGroupSpecs[i].GroupName == name {
			return &rc.Spec.WorkerGroupSpecs[i]
		}
	}
	return nil
}

// DeletePod deletes a Pod and waits up to timeout until it is gone.
func (k Kube) DeletePod(ctx context.Context, t testing.TB, ns, name string, timeout time.Duration) {
	t.Helper()
	pod := &corev1.Pod{}
	pod.Namespace, pod.Name = ns, name
	if err := k.Client.Delete(ctx, pod); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	err := Poll(ctx, PollInterval, func() (bool, error) {
		err := k.Client.Get(ctx, client.ObjectKeyFromObject(pod), &corev1.Pod{})
		return apierrors.IsNotFound(err), err
	})
	if err != nil {
		t.Fatalf("Pod %s is not gone: %v", name, err)
	}
}

// Logs reads a container's logs (the last tail lines, or all for nil), or
// says why it cannot.
func (k Kube) Logs(ctx context.Context, ns, pod, container string, tail *int64) string {
	raw, err := k.Clientset.CoreV1().Pods(ns).GetLogs(pod, &corev1.PodLogOptions{Container: container, TailLines: tail}).DoRaw(ctx)
	if err != nil {
		return fmt.Sprintf("(logs of %s/%s: %v)", pod, container, err)
	}
	return string(raw)
}

// Dump prints what a failed test's namespace holds: RayJobs, RayServices,
// RayClusters, pods with their container states and log tails, and events.
func (k Kube) Dump(ctx context.Context, t testing.TB, ns string) {
	var out strings.Builder
	jobs := &rayv1.RayJobList{}
	if k.Client.List(ctx, jobs, client.InNamespace(ns)) == nil {
		for _, j := range jobs.Items {
			fmt.Fprintf(&out, "RayJob %s: %+v\n", j.Name, j.Status)
		}
	}
	services := &rayv1.RayServiceList{}
	if k.Client.List(ctx, services, client.InNamespace(ns)) == nil {
		for _, rs := range services.Items {
			fmt.Fprintf(&out, "RayService %s: %+v\n", rs.Name, rs.Status)
		}
	}
	clusters := &rayv1.RayClusterList{}
	if k.Client.List(ctx, clusters, client.InNamespace(ns)) == nil {
		for _, c := range clusters.Items {
			fmt.Fprintf(&out, "RayCluster %s: state %s, ready workers %d, conditions %v\n", c.Name, c.Status.State, c.Status.ReadyWorkerReplicas, c.Status.Conditions)
		}
	}
	pods := &corev1.PodList{}
	if k.Client.List(ctx, pods, client.InNamespace(ns)) == nil {
		for _, p := range pods.Items {
			k.dumpPod(ctx, &out, &p)
		}
	}
	events := &corev1.EventList{}
	if k.Client.List(ctx, events, client.InNamespace(ns)) == nil {
		sort.Slice(events.Items, func(i, j int) bool { return events.Items[i].LastTimestamp.Before(&events.Items[j].LastTimestamp) })
		for _, e := range events.Items {
			fmt.Fprintf(&out, "event %s %s/%s %s: %s\n", e.Type, e.InvolvedObject.Kind, e.InvolvedObject.Name, e.Reason, e.Message)
		}
	}
	t.Logf("namespace %s:\n%s", ns, out.String())
}

// dumpPod writes a pod's phase, container states and the tail of each
// container's log.
func (k Kube) dumpPod(ctx context.Context, out *strings.Builder, p *corev1.Pod) {
	fmt.Fprintf(out, "pod %s: %s on %q, IP %s\n", p.Name, p.Status.Phase, p.Spec.NodeName, p.Status.PodIP)
	for _, cs := range append(append([]corev1.ContainerStatus{}, p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...) {
		fmt.Fprintf(out, "  container %s: ready %v, restarts %d, state %+v\n", cs.Name, cs.Ready, cs.RestartCount, cs.State)
		fmt.Fprintf(out, "  --- last lines of %s:\n%s\n", cs.Name, k.Logs(ctx, p.Namespace, p.Name, cs.Name, ptr.To[int64](40)))
	}
}

// WaitRayJob waits up to timeout until the RayJob's deployment status is
// terminal (Complete or Failed) and returns it.
func (k Kube) WaitRayJob(t testing.TB, ns, name string, timeout time.Duration) *rayv1.RayJob {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), timeout)
	defer cancel()
	job := &rayv1.RayJob{}
	began := time.Now()
	err := Poll(ctx, PollInterval, func() (bool, error) {
		if err := k.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, job); err != nil {
			return false, err
		}
		st := job.Status
		return st.JobDeploymentStatus == rayv1.JobDeploymentStatusComplete || st.JobDeploymentStatus == rayv1.JobDeploymentStatusFailed,
			fmt.Errorf("deployment %q, job %q, message %q", st.JobDeploymentStatus, st.JobStatus, st.Message)
	})
	if err != nil {
		t.Fatalf("RayJob %s did not finish: %v", name, err)
	}
	t.Logf("RayJob %s: %s/%s after %v", name, job.Status.JobDeploymentStatus, job.Status.JobStatus, time.Since(began).Round(time.Second))
	return job
}
