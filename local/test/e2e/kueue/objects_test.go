package kueue_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/testing/testenv"
	"github.com/ray-operator/ray-operator/local/internal/e2eutil"
	"github.com/ray-operator/ray-operator/local/internal/kueue"
)

// Kueue's labels on a job (sigs.k8s.io/kueue/pkg/controller/constants).
const (
	queueLabel    = "kueue.x-k8s.io/queue-name"
	priorityLabel = "kueue.x-k8s.io/priority-class"
)

// rayImage is the image the local node maps to the Ray virtualenv.
const (
	rayImage   = "rayproject/ray:2.52.0"
	rayVersion = "2.52.0"
)

// quickEntrypoint is the smallest Ray driver: it connects and prints.
const quickEntrypoint = `python -c "import ray; ray.init(); print(1)"`

// workloadGVK is Kueue's Workload at the version its CRD stores.
var workloadGVK = schema.GroupVersionKind{Group: "kueue.x-k8s.io", Version: "v1beta2", Kind: "Workload"}

// queue is one test's ClusterQueue (named after its namespace) and
// LocalQueue.
type queue struct {
	namespace, clusterQueue, localQueue string
}

// clusterQueueYAML is a ClusterQueue whose quota admits one jobSpec
// RayJob at a time (its head asks 500m CPU and 1Gi, its submitter 200m
// and 512Mi: two need 1.4 CPUs), preempting lower priorities; extra is
// appended to its spec.
const clusterQueueYAML = `apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata:
  name: %[1]s
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata:
  name: %[1]s
spec:
  namespaceSelector:
    matchLabels:
      kubernetes.io/metadata.name: %[1]s
  preemption:
    withinClusterQueue: LowerPriority
  resourceGroups:
  - coveredResources: [cpu, memory]
    flavors:
    - name: %[1]s
      resources:
      - name: cpu
        nominalQuota: %[2]s
      - name: memory
        nominalQuota: 2Gi
%[3]s---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata:
  name: queue
  namespace: %[1]s
spec:
  clusterQueue: %[1]s
`

// newQueue creates a namespace for t with a ResourceFlavor, a ClusterQueue
// of cpuQuota CPUs (clusterQueueYAML, with extraSpec) and a LocalQueue,
// all deleted when t ends.
func (s *suite) newQueue(t *testing.T, cpuQuota, extraSpec string) queue {
	t.Helper()
	ns := e2eutil.Namespace(t, s.Client, func(ctx context.Context, ns string) { s.dump(ctx, t, ns) })
	q := queue{namespace: ns, clusterQueue: ns, localQueue: "queue"}
	s.apply(t, fmt.Sprintf(clusterQueueYAML, ns, cpuQuota, extraSpec))
	return q
}

// apply creates the objects of a YAML manifest, deleting the
// cluster-scoped ones and those in Kueue's namespace when t ends (the
// test's namespace takes the others).
func (s *suite) apply(t *testing.T, manifest string) []*unstructured.Unstructured {
	t.Helper()
	objs := create(t, s.Client, manifest)
	for _, u := range objs {
		if u.GetNamespace() == "" || u.GetNamespace() == kueue.Namespace {
			t.Cleanup(func() { _ = s.Client.Delete(context.Background(), u) })
		}
	}
	return objs
}

// create creates the objects of a YAML manifest through c.
func create(t *testing.T, c client.Client, manifest string) []*unstructured.Unstructured {
	t.Helper()
	objs, err := testenv.DecodeObjects([]byte(manifest))
	if err != nil {
		t.Fatalf("decoding %s: %v", manifest, err)
	}
	for _, u := range objs {
		if err := c.Create(t.Context(), u); err != nil {
			t.Fatalf("creating %s %s: %v", u.GetKind(), u.GetName(), err)
		}
	}
	return objs
}

// rayJob is a Kueue-managed RayJob in q: created suspended with the queue
// label, a head-only cluster deleted once the job ends (as Kueue requires)
// and a small submitter.
func rayJob(q queue, name, entrypoint string) *rayv1.RayJob {
	return &rayv1.RayJob{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: q.namespace, Labels: map[string]string{queueLabel: q.localQueue}},
		Spec: rayv1.RayJobSpec{
			Suspend:                  true,
			Entrypoint:               entrypoint,
			ShutdownAfterJobFinishes: true,
			SubmitterPodTemplate:     ptr.To(podTemplate("ray-job-submitter", "200m", "512Mi")),
			RayClusterSpec:           rayClusterSpec(),
		},
	}
}

// rayClusterSpec is a head-only Ray cluster (500m CPU, 1Gi).
func rayClusterSpec() *rayv1.RayClusterSpec {
	return &rayv1.RayClusterSpec{
		RayVersion: rayVersion,
		HeadGroupSpec: rayv1.HeadGroupSpec{
			RayStartParams: map[string]string{},
			Template:       podTemplate("ray-head", "500m", "1Gi"),
		},
	}
}

func podTemplate(container, cpu, memory string) corev1.PodTemplateSpec {
	requests := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory)}
	return corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		RestartPolicy: corev1.RestartPolicyNever,
		Containers: []corev1.Container{{
			Name: container, Image: rayImage,
			Resources: corev1.ResourceRequirements{Requests: requests, Limits: requests},
		}},
	}}
}

// workloadOf returns the Workload Kueue created for the object of kind
// named name in ns (the Workload's controller owner), or nil.
func (s *suite) workloadOf(ctx context.Context, ns, kind, name string) (*unstructured.Unstructured, error) {
	return workloadOf(ctx, s.Client, ns, kind, name)
}

// workloadOf returns the Workload of the object of kind named name in ns
// of c's cluster, or nil.
func workloadOf(ctx context.Context, c client.Client, ns, kind, name string) (*unstructured.Unstructured, error) {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(workloadGVK.GroupVersion().WithKind("WorkloadList"))
	if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	for i := range list.Items {
		for _, ref := range list.Items[i].GetOwnerReferences() {
			if ref.Kind == kind && ref.Name == name && ptr.Deref(ref.Controller, false) {
				return &list.Items[i], nil
			}
		}
	}
	return nil, nil
}

// condition returns the Workload's condition of type typ, or nil.
func condition(wl *unstructured.Unstructured, typ string) *metav1.Condition {
	conds, _, _ := unstructured.NestedSlice(wl.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] != typ {
			continue
		}
		at, _ := time.Parse(time.RFC3339, fmt.Sprint(m["lastTransitionTime"]))
		return &metav1.Condition{
			Type: typ, Status: metav1.ConditionStatus(fmt.Sprint(m["status"])), Reason: fmt.Sprint(m["reason"]),
			Message: fmt.Sprint(m["message"]), LastTransitionTime: metav1.NewTime(at),
		}
	}
	return nil
}

// isTrue reports whether the Workload's condition typ is True.
func isTrue(wl *unstructured.Unstructured, typ string) bool {
	c := condition(wl, typ)
	return c != nil && c.Status == metav1.ConditionTrue
}

// waitWorkload polls the Workload of kind/name until cond holds.
func (s *suite) waitWorkload(t *testing.T, ns, kind, name string, timeout time.Duration, what string, cond func(*unstructured.Unstructured) bool) *unstructured.Unstructured {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), timeout)
	defer cancel()
	var wl *unstructured.Unstructured
	err := e2eutil.Poll(ctx, e2eutil.PollInterval, func() (bool, error) {
		var err error
		if wl, err = s.workloadOf(ctx, ns, kind, name); err != nil || wl == nil {
			return false, fmt.Errorf("no Workload yet (%v)", err)
		}
		conds, _, _ := unstructured.NestedSlice(wl.Object, "status", "conditions")
		return cond(wl), fmt.Errorf("conditions %v", conds)
	})
	if err != nil {
		t.Fatalf("the Workload of %s %s is not %s: %v", kind, name, what, err)
	}
	return wl
}

// waitRayJob polls the RayJob until cond holds and returns it.
func (s *suite) waitRayJob(t *testing.T, ns, name string, timeout time.Duration, what string, cond func(*rayv1.RayJob) bool) *rayv1.RayJob {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), timeout)
	defer cancel()
	job := &rayv1.RayJob{}
	err := e2eutil.Poll(ctx, e2eutil.PollInterval, func() (bool, error) {
		if err := s.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, job); err != nil {
			return false, err
		}
		st := job.Status
		return cond(job), fmt.Errorf("suspend %v, deployment %q, job %q, message %q", job.Spec.Suspend, st.JobDeploymentStatus, st.JobStatus, st.Message)
	})
	if err != nil {
		t.Fatalf("RayJob %s is not %s: %v", name, what, err)
	}
	return job
}

// succeeded: the RayJob finished and Ray reports its job SUCCEEDED.
func succeeded(job *rayv1.RayJob) bool {
	return job.Status.JobDeploymentStatus == rayv1.JobDeploymentStatusComplete && job.Status.JobStatus == rayv1.JobStatusSucceeded
}

// dump prints what a failed test's namespace holds: RayJobs, RayServices,
// RayClusters, Workloads and events.
func (s *suite) dump(ctx context.Context, t testing.TB, ns string) {
	dump(ctx, t, s.Client, ns)
}

// dump prints what namespace ns of c's cluster holds.
func dump(ctx context.Context, t testing.TB, c client.Client, ns string) {
	jobs := &rayv1.RayJobList{}
	if c.List(ctx, jobs, client.InNamespace(ns)) == nil {
		for _, j := range jobs.Items {
			t.Logf("RayJob %s: suspend %v, managedBy %v, status %+v", j.Name, j.Spec.Suspend, j.Spec.ManagedBy, j.Status)
		}
	}
	services := &rayv1.RayServiceList{}
	if c.List(ctx, services, client.InNamespace(ns)) == nil {
		for _, rs := range services.Items {
			t.Logf("RayService %s: rayClusterConfig.suspend %v, status %+v", rs.Name, rs.Spec.RayClusterSpec.Suspend, rs.Status)
		}
	}
	clusters := &rayv1.RayClusterList{}
	if c.List(ctx, clusters, client.InNamespace(ns)) == nil {
		for _, rc := range clusters.Items {
			t.Logf("RayCluster %s: suspend %v, state %s, conditions %v", rc.Name, rc.Spec.Suspend, rc.Status.State, rc.Status.Conditions)
		}
	}
	wls := &unstructured.UnstructuredList{}
	wls.SetGroupVersionKind(workloadGVK.GroupVersion().WithKind("WorkloadList"))
	if c.List(ctx, wls, client.InNamespace(ns)) == nil {
		for _, wl := range wls.Items {
			t.Logf("Workload %s: %v", wl.GetName(), wl.Object["status"])
		}
	}
	events := &corev1.EventList{}
	if c.List(ctx, events, client.InNamespace(ns)) == nil {
		for _, e := range events.Items {
			t.Logf("event %s %s/%s %s: %s", e.Type, e.InvolvedObject.Kind, e.InvolvedObject.Name, e.Reason, e.Message)
		}
	}
}
