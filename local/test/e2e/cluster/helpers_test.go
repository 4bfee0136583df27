package cluster_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
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
	return e2eutil.Namespace(t, s.Client, func(ctx context.Context, ns string) { s.dump(ctx, t, ns) })
}

// deleteNamespace deletes ns and waits until it is gone, so that the next
// test has the node's CPUs back.
func (s *suite) deleteNamespace(ctx context.Context, t testing.TB, name string) {
	if err := e2eutil.DeleteNamespace(ctx, s.Client, name); err != nil {
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
	data, err := os.ReadFile(filepath.Join(s.Root, "config", "samples", file))
	if err != nil {
		t.Fatal(err)
	}
	return s.applyManifest(t, ns, file, data)
}

// create creates obj (built by e2eutil's builders) in ns.
func (s *suite) create(t testing.TB, ns string, obj client.Object) {
	t.Helper()
	obj.SetNamespace(ns)
	if err := s.Client.Create(t.Context(), obj); err != nil {
		t.Fatalf("creating %s %s: %v", obj.GetObjectKind().GroupVersionKind().Kind, obj.GetName(), err)
	}
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
		if err := s.Client.Create(t.Context(), u); err != nil {
			t.Fatalf("creating %s %s from %s: %v", u.GetKind(), u.GetName(), from, err)
		}
		typed, err := s.Client.Scheme().New(u.GroupVersionKind())
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
// (Complete or Failed) and returns it (e2eutil.Kube.WaitRayJob).
func (s *suite) waitRayJob(t *testing.T, ns, name string, timeout time.Duration) *rayv1.RayJob {
	t.Helper()
	return s.WaitRayJob(t, ns, name, timeout)
}

// submitterLogs returns the logs of the submitter container of the RayJob's
// Kubernetes Job (through the API server and the node's kubelet API, as
// kubectl logs reads them).
func (s *suite) submitterLogs(t *testing.T, ns, job string) string {
	t.Helper()
	pods := &corev1.PodList{}
	if err := s.Client.List(t.Context(), pods, client.InNamespace(ns), client.MatchingLabels{"batch.kubernetes.io/job-name": job}); err != nil {
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

// logs reads a container's logs, or says why it cannot
// (e2eutil.Kube.Logs).
func (s *suite) logs(ctx context.Context, ns, pod, container string, tail *int64) string {
	return s.Logs(ctx, ns, pod, container, tail)
}

// dump prints what a failed test's namespace holds and the node's network
// (e2eutil.Suite.Dump).
func (s *suite) dump(ctx context.Context, t testing.TB, ns string) {
	s.Dump(ctx, t, ns)
}
