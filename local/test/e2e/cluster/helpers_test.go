package cluster_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/testing/testenv"
	"github.com/ray-operator/ray-operator/local/internal/e2eutil"
)

// pollInterval is how often waits look again; Ray takes seconds per step.
const pollInterval = e2eutil.PollInterval

// namespaceGoneTimeout bounds the deletion of a test's namespace.
const namespaceGoneTimeout = e2eutil.NamespaceGoneTimeout

// namespace creates a namespace for t (e2eutil.Namespace); when t failed,
// what the namespace held is printed before it is deleted.
func (s *suite) namespace(t testing.TB) string {
	t.Helper()
	return e2eutil.Namespace(t, s.client, func(ctx context.Context, ns string) { s.dump(ctx, t, ns) })
}

// deleteNamespace deletes ns and waits until it is gone, so that the next
// test has the node's CPUs back.
func (s *suite) deleteNamespace(ctx context.Context, t testing.TB, name string) {
	if err := e2eutil.DeleteNamespace(ctx, s.client, name); err != nil {
		t.Error(err)
	}
}

// poll polls cond every pollInterval until it holds or ctx ends
// (e2eutil.Poll).
func poll(ctx context.Context, cond func() (bool, error)) error {
	return e2eutil.Poll(ctx, pollInterval, cond)
}

// applySample creates the objects of config/samples/<file> in ns and
// returns the last one, typed.
func (s *suite) applySample(t testing.TB, ns, file string) runtime.Object {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(s.root, "config", "samples", file))
	if err != nil {
		t.Fatal(err)
	}
	return s.applyManifest(t, ns, file, data)
}

// applyManifest creates the objects of a YAML manifest (named from, for
// messages) in ns and returns the last one, typed.
func (s *suite) applyManifest(t testing.TB, ns, from string, data []byte) runtime.Object {
	t.Helper()
	objs, err := testenv.DecodeObjects(data)
	if err != nil {
		t.Fatalf("decoding %s: %v", from, err)
	}
	var last runtime.Object
	for _, u := range objs {
		u.SetNamespace(ns)
		if err := s.client.Create(t.Context(), u); err != nil {
			t.Fatalf("creating %s %s from %s: %v", u.GetKind(), u.GetName(), from, err)
		}
		typed, err := s.client.Scheme().New(u.GroupVersionKind())
		if err != nil {
			t.Fatal(err)
		}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, typed); err != nil {
			t.Fatal(err)
		}
		last = typed
	}
	return last
}

// waitRayJob waits until the RayJob's deployment status is terminal
// (Complete or Failed) and returns it.
func (s *suite) waitRayJob(t *testing.T, ns, name string, timeout time.Duration) *rayv1.RayJob {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), timeout)
	defer cancel()
	job := &rayv1.RayJob{}
	began := time.Now()
	err := poll(ctx, func() (bool, error) {
		if err := s.client.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, job); err != nil {
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

// submitterLogs returns the logs of the submitter container of the RayJob's
// Kubernetes Job (through the API server and the node's kubelet API, as
// kubectl logs reads them).
func (s *suite) submitterLogs(t *testing.T, ns, job string) string {
	t.Helper()
	pods := &corev1.PodList{}
	if err := s.client.List(t.Context(), pods, client.InNamespace(ns), client.MatchingLabels{"batch.kubernetes.io/job-name": job}); err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) == 0 {
		t.Fatalf("no submitter pod of Job %s", job)
	}
	var all strings.Builder
	for _, p := range pods.Items {
		all.WriteString(s.logs(t.Context(), ns, p.Name, "ray-job-submitter", nil))
	}
	return all.String()
}

// logs reads a container's logs, or says why it cannot.
func (s *suite) logs(ctx context.Context, ns, pod, container string, tail *int64) string {
	raw, err := s.clientset.CoreV1().Pods(ns).GetLogs(pod, &corev1.PodLogOptions{Container: container, TailLines: tail}).DoRaw(ctx)
	if err != nil {
		return fmt.Sprintf("(logs of %s/%s: %v)", pod, container, err)
	}
	return string(raw)
}

// dump prints what a failed test's namespace holds: RayJobs, RayServices,
// RayClusters, pods with their container states and log tails, and events.
func (s *suite) dump(ctx context.Context, t testing.TB, ns string) {
	var out strings.Builder
	jobs := &rayv1.RayJobList{}
	if s.client.List(ctx, jobs, client.InNamespace(ns)) == nil {
		for _, j := range jobs.Items {
			fmt.Fprintf(&out, "RayJob %s: %+v\n", j.Name, j.Status)
		}
	}
	services := &rayv1.RayServiceList{}
	if s.client.List(ctx, services, client.InNamespace(ns)) == nil {
		for _, rs := range services.Items {
			fmt.Fprintf(&out, "RayService %s: %+v\n", rs.Name, rs.Status)
		}
	}
	clusters := &rayv1.RayClusterList{}
	if s.client.List(ctx, clusters, client.InNamespace(ns)) == nil {
		for _, c := range clusters.Items {
			fmt.Fprintf(&out, "RayCluster %s: state %s, ready workers %d, conditions %v\n", c.Name, c.Status.State, c.Status.ReadyWorkerReplicas, c.Status.Conditions)
		}
	}
	pods := &corev1.PodList{}
	if s.client.List(ctx, pods, client.InNamespace(ns)) == nil {
		for _, p := range pods.Items {
			s.dumpPod(ctx, &out, &p)
		}
	}
	events := &corev1.EventList{}
	if s.client.List(ctx, events, client.InNamespace(ns)) == nil {
		sort.Slice(events.Items, func(i, j int) bool { return events.Items[i].LastTimestamp.Before(&events.Items[j].LastTimestamp) })
		for _, e := range events.Items {
			fmt.Fprintf(&out, "event %s %s/%s %s: %s\n", e.Type, e.InvolvedObject.Kind, e.InvolvedObject.Name, e.Reason, e.Message)
		}
	}
	t.Logf("namespace %s:\n%s", ns, out.String())
}

// dumpPod writes a pod's phase, container states and the tail of each
// container's log.
func (s *suite) dumpPod(ctx context.Context, out *strings.Builder, p *corev1.Pod) {
	fmt.Fprintf(out, "pod %s: %s on %q, IP %s\n", p.Name, p.Status.Phase, p.Spec.NodeName, p.Status.PodIP)
	for _, cs := range append(append([]corev1.ContainerStatus{}, p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...) {
		fmt.Fprintf(out, "  container %s: ready %v, restarts %d, state %+v\n", cs.Name, cs.Ready, cs.RestartCount, cs.State)
		fmt.Fprintf(out, "  --- last lines of %s:\n%s\n", cs.Name, s.logs(ctx, p.Namespace, p.Name, cs.Name, ptr.To[int64](40)))
	}
}
