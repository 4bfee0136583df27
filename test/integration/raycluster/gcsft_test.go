package raycluster_test

import (
	"context"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/controller/raycluster"
)

// createFTCluster creates a GCS fault tolerant cluster, waits for its
// finalizer and Pods, deletes it and returns the cleanup Job once created.
func (w *world) createAndDeleteFTCluster(name string, annotations map[string]string) *batchv1.Job {
	w.T.Helper()
	rc := w.newCluster(name, group("small", 1))
	rc.Annotations = annotations
	rc.Spec.GcsFaultToleranceOptions = &rayv1.GcsFaultToleranceOptions{RedisAddress: "redis:6379"}
	w.Create(rc)
	w.Eventually("the Redis cleanup finalizer", func() (bool, error) {
		return controllerutil.ContainsFinalizer(w.RayCluster(name), rayv1.GCSFaultToleranceRedisCleanupFinalizer), nil
	})
	w.WaitPods(name, nil, 2)
	if err := w.Client.Delete(context.Background(), w.RayCluster(name)); err != nil {
		w.T.Fatal(err)
	}
	w.WaitPods(name, map[string]string{rayv1.LabelNodeType: "head"}, 0)
	w.WaitPods(name, map[string]string{rayv1.LabelNodeType: "worker"}, 0)
	job := &batchv1.Job{}
	w.Eventually("the Redis cleanup Job", func() (bool, error) {
		err := w.Client.Get(context.Background(), client.ObjectKey{Namespace: w.NS, Name: name + "-redis-cleanup"}, job)
		return err == nil, client.IgnoreNotFound(err)
	})
	if w.RayCluster(name) == nil {
		w.T.Fatal("cluster deleted before its cleanup Job finished")
	}
	return job
}

func TestGCSFTDeletionThroughCleanupJob(t *testing.T) {
	for name, failed := range map[string]bool{"ft-ok": false, "ft-failed": true} {
		t.Run(name, func(t *testing.T) {
			w := newWorld(t)
			job := w.createAndDeleteFTCluster(name, nil)
			if got := job.Labels[rayv1.LabelNodeType]; got != "redis-cleanup" {
				t.Errorf("cleanup Job node type = %q", got)
			}
			if ref := metav1.GetControllerOf(job); ref == nil || ref.Name != name {
				t.Errorf("cleanup Job controller = %v", ref)
			}
			w.WaitEvent(name, "CreatedRedisCleanupJob")
			w.FinishJob(job.Name, !failed)
			w.Eventually("the RayCluster to be gone", func() (bool, error) { return w.RayCluster(name) == nil, nil })
			if failed {
				w.WaitEvent(name, "RedisCleanupJobFailed")
			}
		})
	}
}

func TestGCSFTDeletionTimeout(t *testing.T) {
	for name, tc := range map[string]struct {
		annotations map[string]string
		timeout     time.Duration
	}{
		"ft-default-timeout": {nil, raycluster.DefaultGCSFTDeletionTimeout},
		"ft-short-timeout":   {map[string]string{rayv1.AnnotationGCSFTDeletionTimeout: "60"}, time.Minute},
	} {
		t.Run(name, func(t *testing.T) {
			w := newWorld(t)
			w.createAndDeleteFTCluster(name, tc.annotations)
			deletedAt := w.RayCluster(name).DeletionTimestamp.Time

			// Just before the timeout the cleanup still holds the cluster.
			w.clock.SetTime(deletedAt.Add(tc.timeout - 10*time.Second))
			w.Consistently("the cluster waiting for its cleanup", 3*time.Second, func() (bool, error) { return w.RayCluster(name) != nil, nil })

			w.clock.SetTime(deletedAt.Add(tc.timeout))
			w.Eventually("the RayCluster to be gone", func() (bool, error) { return w.RayCluster(name) == nil, nil })
			e := w.WaitEvent(name, "ForceDeletedStuckCluster")
			if e.Type != corev1.EventTypeWarning {
				t.Errorf("event type = %s, want Warning", e.Type)
			}
		})
	}
}
