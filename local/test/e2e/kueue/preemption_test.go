package kueue_test

import (
	"fmt"
	"testing"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// priorityClassesYAML are a low and a high WorkloadPriorityClass, named
// after the test's namespace.
const priorityClassesYAML = `apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata:
  name: %[1]s-low
value: 100
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata:
  name: %[1]s-high
value: 1000
`

// sleepingEntrypoint runs long enough to be preempted while Ray runs it,
// and then, run again from the start, ends SUCCEEDED.
const sleepingEntrypoint = `python -c "import ray, time; ray.init(); time.sleep(15); print(1)"`

// TestPreemptionSuspendsAndResumesRayJob: a low-priority RayJob runs (Ray
// reports RUNNING) when a high-priority one arrives in its ClusterQueue,
// which holds one. Kueue preempts the low one (its Workload is evicted,
// the RayJob suspended), the operator tears its cluster down and reports
// Suspended, and only then does the high one's cluster appear. The high one
// succeeds; Kueue then admits the low one again, which the operator runs
// from the start to SUCCEEDED.
func TestPreemptionSuspendsAndResumesRayJob(t *testing.T) {
	t.Parallel() // waits for real Ray jobs: see the package comment
	q := shared.newQueue(t, "1", "")
	shared.apply(t, fmt.Sprintf(priorityClassesYAML, q.namespace))
	low := rayJob(q, "low", sleepingEntrypoint)
	low.Labels[priorityLabel] = q.namespace + "-low"
	if err := shared.Client.Create(t.Context(), low); err != nil {
		t.Fatalf("creating the low-priority RayJob: %v", err)
	}
	shared.waitRayJob(t, q.namespace, low.Name, jobTimeout, "RUNNING in Ray", func(j *rayv1.RayJob) bool {
		return j.Status.JobStatus == rayv1.JobStatusRunning
	})
	tl, stop := shared.watchNamespace(t, q.namespace)
	high := rayJob(q, "high", quickEntrypoint)
	high.Labels[priorityLabel] = q.namespace + "-high"
	if err := shared.Client.Create(t.Context(), high); err != nil {
		t.Fatalf("creating the high-priority RayJob: %v", err)
	}
	shared.waitRayJob(t, q.namespace, low.Name, jobTimeout, "suspended by Kueue", func(j *rayv1.RayJob) bool {
		return j.Spec.Suspend && j.Status.JobDeploymentStatus == rayv1.JobDeploymentStatusSuspended
	})
	shared.waitRayJob(t, q.namespace, high.Name, jobTimeout, "SUCCEEDED", succeeded)
	resumed := shared.waitRayJob(t, q.namespace, low.Name, 2*jobTimeout, "resumed to SUCCEEDED", succeeded)
	stop()
	events, err := tl.snapshot()
	if err != nil {
		t.Fatal(err)
	}
	checkPreemption(t, events)
	if resumed.Status.Failed != nil && *resumed.Status.Failed != 0 {
		t.Errorf("the resumed RayJob counts %d failed attempts; a preemption is not a failure", *resumed.Status.Failed)
	}
}

// checkPreemption: the low RayJob's Workload was Preempted and Evicted,
// its RayCluster was deleted before the high RayJob's appeared, at no
// moment were two Workloads admitted or two running RayJobs' clusters
// present, and the low one was admitted again after the high one.
func checkPreemption(t *testing.T, events []event) {
	t.Helper()
	r := replayEvents(events)
	lowGone := firstIndex(events, func(e event) bool { return e.kind == "RayCluster" && e.owner == "low" && e.deleted })
	highUp := firstIndex(events, func(e event) bool { return e.kind == "RayCluster" && e.owner == "high" && !e.deleted })
	lowBack := firstIndex(events[max(highUp, 0):], func(e event) bool { return e.kind == "RayCluster" && e.owner == "low" && !e.deleted })
	switch {
	case !r.seenTrue["low"]["Preempted"] || !r.seenTrue["low"]["Evicted"]:
		t.Errorf("the low RayJob's Workload was not Preempted and Evicted (true conditions seen: %v)", r.seenTrue["low"])
	case lowGone < 0 || highUp < 0 || lowGone > highUp:
		t.Errorf("the low RayJob's cluster deleted at event %d, the high one's created at %d; want the deletion first", lowGone, highUp)
	case lowBack < 0:
		t.Error("the low RayJob got no cluster again after the high one's")
	case len(r.violationLog) > 0:
		t.Errorf("violations: %v", r.violationLog)
	}
	if t.Failed() {
		t.Logf("events:\n%s", describe(events))
	}
}
