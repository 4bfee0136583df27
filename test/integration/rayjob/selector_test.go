package rayjob_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// TestClusterSelector: a RayJob on an existing cluster neither creates nor
// deletes a cluster, even with shutdownAfterJobFinishes.
func TestClusterSelector(t *testing.T) {
	w := newWorld(t)
	shared := &rayv1.RayCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "shared"},
		Spec:       *rayJob("x", rayv1.HTTPMode).Spec.RayClusterSpec,
	}
	w.Create(shared)
	w.makeClusterReady("shared")
	w.Create(rayJob("selector", rayv1.HTTPMode, func(j *rayv1.RayJob) {
		j.Spec.RayClusterSpec = nil
		j.Spec.ClusterSelector = map[string]string{"ray.io/cluster": "shared"}
		j.Spec.ShutdownAfterJobFinishes = true
	}))
	job := w.WaitRayJob("selector", rayv1.JobDeploymentStatusRunning)
	if job.Status.RayClusterName != "shared" {
		t.Errorf("cluster %q", job.Status.RayClusterName)
	}
	w.setRayJobStatus("selector", rayv1.JobStatusSucceeded)
	w.WaitRayJob("selector", rayv1.JobDeploymentStatusComplete)
	// A wrong deletion or head Service would come on one of the next passes.
	w.Consistently("the selected cluster alone, kept, and no head Service", 4*time.Second, func() (bool, error) {
		clusters := w.clusters()
		if len(clusters) != 1 || clusters[0].Name != "shared" || !clusters[0].DeletionTimestamp.IsZero() {
			return false, fmt.Errorf("clusters %v", clusters)
		}
		svc := &corev1.Service{}
		if err := w.Client.Get(t.Context(), keyOf(w.NS, "selector-head-svc"), svc); err == nil {
			return false, errors.New("a head Service was created for a selected cluster")
		}
		return true, nil
	})
}

// TestDeleteWhileRunningStopsTheRayJob: deleting a Running RayJob stops its
// Ray job, and the finalizer lets the RayJob go.
func TestDeleteWhileRunningStopsTheRayJob(t *testing.T) {
	w := newWorld(t)
	w.Create(rayJob("doomed", rayv1.HTTPMode))
	w.makeClusterReady(w.RayJobCluster("doomed").Name)
	w.WaitRayJob("doomed", rayv1.JobDeploymentStatusRunning)
	w.setRayJobStatus("doomed", rayv1.JobStatusRunning)
	id := w.RayJob("doomed").Status.JobID
	w.Eventually("the RayJob to see RUNNING", func() (bool, error) { return w.RayJob("doomed").Status.JobStatus == rayv1.JobStatusRunning, nil })

	if err := w.Client.Delete(t.Context(), w.RayJob("doomed")); err != nil {
		t.Fatal(err)
	}
	w.Eventually("the RayJob to be gone", func() (bool, error) { return w.RayJob("doomed") == nil, nil })
	if info, ok := w.dash.Job(id); !ok || info.JobStatus != rayv1.JobStatusStopped {
		t.Errorf("Ray job %q after deletion, want STOPPED", info.JobStatus)
	}
}

// TestDeletionRulesDeleteWorkersThenSelf: rules run in TTL order on the
// operator's clock.
func TestDeletionRulesDeleteWorkersThenSelf(t *testing.T) {
	w := newWorld(t)
	succeeded := rayv1.JobStatusSucceeded
	w.Create(rayJob("rules", rayv1.HTTPMode, func(j *rayv1.RayJob) {
		j.Spec.DeletionStrategy = &rayv1.DeletionStrategy{DeletionRules: []rayv1.DeletionRule{
			{Policy: rayv1.DeleteWorkers, Condition: rayv1.DeletionCondition{JobStatus: &succeeded, TTLSeconds: 0}},
			{Policy: rayv1.DeleteSelf, Condition: rayv1.DeletionCondition{JobStatus: &succeeded, TTLSeconds: 60}},
		}}
	}))
	cluster := w.RayJobCluster("rules")
	w.makeClusterReady(cluster.Name)
	w.WaitRayJob("rules", rayv1.JobDeploymentStatusRunning)
	w.setRayJobStatus("rules", rayv1.JobStatusSucceeded)
	w.WaitRayJob("rules", rayv1.JobDeploymentStatusComplete)
	w.Eventually("the workers to be suspended", func() (bool, error) {
		err := w.Client.Get(t.Context(), keyOf(w.NS, cluster.Name), cluster)
		return err == nil && cluster.Spec.WorkerGroupSpecs[0].Suspend != nil && *cluster.Spec.WorkerGroupSpecs[0].Suspend, err
	})
	if w.RayJob("rules") == nil {
		t.Fatal("RayJob deleted before its TTL")
	}
	w.clock.Step(61 * time.Second)
	// Touch the RayJob so the operator looks again now rather than at the
	// (real-time) requeue.
	job := &rayv1.RayJob{ObjectMeta: metav1.ObjectMeta{Name: "rules", Namespace: w.NS}}
	w.Update(job, func() { job.Annotations = map[string]string{"touch": "1"} })
	w.Eventually("the RayJob to delete itself", func() (bool, error) { return w.RayJob("rules") == nil, nil })
}
