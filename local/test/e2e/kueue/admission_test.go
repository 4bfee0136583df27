package kueue_test

import (
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// jobTimeout bounds one small RayJob from admission to SUCCEEDED: a Ray
// head starting on the local node, the submitter, the driver.
const jobTimeout = 2 * time.Minute

// TestRayJobsAdmittedOneAtATime: three suspended RayJobs queue in a
// ClusterQueue whose quota holds one. Kueue admits one at a time (it
// unsuspends the RayJob), the operator runs it with real Ray to SUCCEEDED
// and deletes its cluster, Kueue sees it finished and admits the next. The
// watches show at most one admitted Workload and one RayCluster of a
// running RayJob at any moment.
func TestRayJobsAdmittedOneAtATime(t *testing.T) {
	t.Parallel() // waits for real Ray jobs: see the package comment
	q := shared.newQueue(t, "1", "")
	tl, stop := shared.watchNamespace(t, q.namespace)
	names := []string{"first", "second", "third"}
	for _, name := range names {
		if err := shared.Client.Create(t.Context(), rayJob(q, name, quickEntrypoint)); err != nil {
			t.Fatalf("creating RayJob %s: %v", name, err)
		}
	}
	began := time.Now()
	for _, name := range names {
		shared.waitRayJob(t, q.namespace, name, time.Duration(len(names))*jobTimeout, "SUCCEEDED", succeeded)
	}
	t.Logf("three RayJobs, one after another, in %v", time.Since(began).Round(time.Second))
	for _, name := range names {
		shared.waitWorkload(t, q.namespace, "RayJob", name, time.Minute, "Finished", func(wl *unstructured.Unstructured) bool { return isTrue(wl, "Finished") })
	}
	stop()
	events, err := tl.snapshot()
	if err != nil {
		t.Fatal(err)
	}
	r := replayEvents(events)
	sorted := slices.Sorted(slices.Values(r.admissions))
	if len(r.violationLog) > 0 || !slices.Equal(sorted, []string{"first", "second", "third"}) {
		t.Errorf("admissions %v, violations:\n%v\nevents:\n%s", r.admissions, r.violationLog, describe(events))
	}
	t.Logf("admission order %v; at most %d RayClusters at once (a finished RayJob's is deleted after it ends)", r.admissions, r.maxClusters)
}
