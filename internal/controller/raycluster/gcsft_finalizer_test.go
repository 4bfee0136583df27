package raycluster

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/features"
)

func ftCluster(annotations map[string]string) *rayv1.RayCluster {
	return makeCluster("rc").worker("small", 1).with(func(rc *rayv1.RayCluster) {
		rc.Annotations = annotations
		rc.Spec.GcsFaultToleranceOptions = &rayv1.GcsFaultToleranceOptions{RedisAddress: "redis:6379"}
	}).obj()
}

// startDeletion creates the cluster, lets it come up and deletes it.
func startDeletion(t *testing.T, h *harness) {
	t.Helper()
	h.mustReconcile("rc", 1)
	if !controllerutil.ContainsFinalizer(h.cluster("rc"), rayv1.GCSFaultToleranceRedisCleanupFinalizer) {
		t.Fatal("GCS FT cluster did not get the Redis cleanup finalizer")
	}
	if n := len(h.pods(nil)); n != 2 {
		t.Fatalf("Pods = %d, want 2", n)
	}
	if err := h.c.Delete(t.Context(), h.cluster("rc")); err != nil {
		t.Fatal(err)
	}
	h.eventReasons()
}

func (h *harness) cleanupJob() *batchv1.Job {
	h.t.Helper()
	job := &batchv1.Job{}
	if err := h.c.Get(h.t.Context(), types.NamespacedName{Namespace: testNamespace, Name: "rc-redis-cleanup"}, job); err != nil {
		h.t.Fatal(err)
	}
	return job
}

func (h *harness) clusterGone() bool {
	err := h.c.Get(h.t.Context(), types.NamespacedName{Namespace: testNamespace, Name: "rc"}, &rayv1.RayCluster{})
	return apierrors.IsNotFound(err)
}

func TestGCSFTFinalizerFlow(t *testing.T) {
	for name, tc := range map[string]struct {
		jobCondition batchv1.JobConditionType
		wantEvents   []string
	}{
		"cleanup succeeds": {batchv1.JobComplete, nil},
		"cleanup fails":    {batchv1.JobFailed, []string{"Warning RedisCleanupJobFailed"}},
	} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, Options{GCSFTRedisCleanup: true}, ftCluster(nil))
			startDeletion(t, h)

			// The first pass deletes the Pods and waits for the head to
			// terminate; once it is gone the cleanup Job is created.
			if res := h.mustReconcile("rc", 1); res.RequeueAfter != headTerminationRequeue {
				t.Errorf("requeue = %v, want %v", res.RequeueAfter, headTerminationRequeue)
			}
			if n := len(h.pods(nil)); n != 0 {
				t.Fatalf("Pods after the deletion pass = %d, want 0", n)
			}
			if res := h.mustReconcile("rc", 1); res.RequeueAfter != shortRequeue {
				t.Errorf("requeue = %v, want %v", res.RequeueAfter, shortRequeue)
			}
			job := h.cleanupJob()
			if diff := cmp.Diff([]string{"Normal CreatedRedisCleanupJob"}, h.eventReasons()); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			if got := job.Labels[rayv1.LabelNodeType]; got != string(rayv1.RedisCleanupNode) {
				t.Errorf("job node type = %q", got)
			}

			// Running: the finalizer stays.
			h.mustReconcile("rc", 1)
			if h.clusterGone() {
				t.Fatal("cluster deleted while the cleanup Job runs")
			}

			job.Status.Conditions = []batchv1.JobCondition{{Type: tc.jobCondition, Status: corev1.ConditionTrue}}
			if err := h.c.Status().Update(t.Context(), job); err != nil {
				t.Fatal(err)
			}
			h.mustReconcile("rc", 1)
			if !h.clusterGone() {
				t.Error("cluster still exists after the cleanup Job finished")
			}
			if diff := cmp.Diff(tc.wantEvents, h.eventReasons()); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

func TestGCSFTFinalizerWaitsForTheHead(t *testing.T) {
	h := newHarness(t, Options{GCSFTRedisCleanup: true}, ftCluster(nil))
	h.mustReconcile("rc", 1)
	// A head Pod that terminates slowly: it has a finalizer of its own.
	head := h.pods(headPodLabels)[0]
	head.Finalizers = []string{"test/slow-termination"}
	if err := h.c.Update(t.Context(), &head); err != nil {
		t.Fatal(err)
	}
	if err := h.c.Delete(t.Context(), h.cluster("rc")); err != nil {
		t.Fatal(err)
	}
	res := h.mustReconcile("rc", 1)
	if res.RequeueAfter != headTerminationRequeue {
		t.Errorf("requeue = %v, want %v while the head terminates", res.RequeueAfter, headTerminationRequeue)
	}
	if err := h.c.Get(t.Context(), types.NamespacedName{Namespace: testNamespace, Name: "rc-redis-cleanup"}, &batchv1.Job{}); !apierrors.IsNotFound(err) {
		t.Errorf("cleanup Job created before the head is gone (err = %v)", err)
	}
}

func TestGCSFTFinalizerTimeout(t *testing.T) {
	for name, tc := range map[string]struct {
		annotations map[string]string
		timeout     time.Duration
	}{
		"default":    {nil, DefaultGCSFTDeletionTimeout},
		"annotation": {map[string]string{rayv1.AnnotationGCSFTDeletionTimeout: "60"}, time.Minute},
		"bad value":  {map[string]string{rayv1.AnnotationGCSFTDeletionTimeout: "soon"}, DefaultGCSFTDeletionTimeout},
	} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, Options{GCSFTRedisCleanup: true}, ftCluster(tc.annotations))
			startDeletion(t, h)
			// The fake client stamps deletionTimestamp with the real time.
			h.clk.SetTime(h.cluster("rc").DeletionTimestamp.Time)
			h.mustReconcile("rc", 3) // Pods deleted, Job created, Job running

			h.clk.Step(tc.timeout - time.Second)
			if res := h.mustReconcile("rc", 1); res.RequeueAfter > time.Second || res.RequeueAfter <= 0 {
				t.Errorf("requeue = %v, want at most the 1s left before the timeout", res.RequeueAfter)
			}
			if h.clusterGone() {
				t.Fatal("finalizer removed before the timeout")
			}
			h.clk.Step(time.Second)
			h.mustReconcile("rc", 1)
			if !h.clusterGone() {
				t.Fatal("finalizer not removed after the timeout")
			}
			if diff := cmp.Diff([]string{"Normal CreatedRedisCleanupJob", "Warning ForceDeletedStuckCluster"}, h.eventReasons()); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

func TestGCSFTFinalizerDisabled(t *testing.T) {
	h := newHarness(t, Options{GCSFTRedisCleanup: false}, ftCluster(nil))
	h.mustReconcile("rc", 1)
	if controllerutil.ContainsFinalizer(h.cluster("rc"), rayv1.GCSFaultToleranceRedisCleanupFinalizer) {
		t.Error("finalizer added although ENABLE_GCS_FT_REDIS_CLEANUP=false")
	}
}

// TestGCSFTFinalizerEmbeddedBackend: a RocksDB cluster gets no Redis
// cleanup finalizer, and one that got it on Redis before switching to
// RocksDB loses it on deletion without a cleanup Job (KubeRay's
// Test_RedisCleanupSkippedForEmbeddedBackend and
// Test_StaleRedisCleanupFinalizerRemovedForEmbeddedBackend).
func TestGCSFTFinalizerEmbeddedBackend(t *testing.T) {
	gate := features.NewGate()
	if err := gate.Set(string(features.GCSFaultToleranceEmbeddedStorage) + "=true"); err != nil {
		t.Fatal(err)
	}
	rocksdb := func(rc *rayv1.RayCluster) {
		rc.Spec.GcsFaultToleranceOptions = &rayv1.GcsFaultToleranceOptions{Backend: rayv1.GcsFTBackendRocksDB}
	}
	t.Run("no finalizer", func(t *testing.T) {
		h := newHarness(t, Options{GCSFTRedisCleanup: true, Features: gate}, makeCluster("rc").worker("small", 1).with(rocksdb).obj())
		h.mustReconcile("rc", 1)
		if fin := h.cluster("rc").Finalizers; len(fin) != 0 {
			t.Errorf("finalizers = %v, want none", fin)
		}
		if n := len(h.pods(nil)); n != 2 {
			t.Errorf("Pods = %d, want 2", n)
		}
	})
	t.Run("stale finalizer removed on deletion", func(t *testing.T) {
		h := newHarness(t, Options{GCSFTRedisCleanup: true, Features: gate}, ftCluster(nil))
		startDeletion(t, h)
		rc := h.cluster("rc")
		rc.Spec.GcsFaultToleranceOptions = &rayv1.GcsFaultToleranceOptions{Backend: rayv1.GcsFTBackendRocksDB}
		h.update(rc)
		h.mustReconcile("rc", 1)
		if !h.clusterGone() {
			t.Fatal("cluster still there: the stale finalizer was not removed")
		}
		err := h.c.Get(t.Context(), types.NamespacedName{Namespace: testNamespace, Name: "rc-redis-cleanup"}, &batchv1.Job{})
		if !apierrors.IsNotFound(err) {
			t.Errorf("cleanup Job lookup = %v, want NotFound", err)
		}
	})
}

// TestGCSFTFinalizerStep: the finalizer is the first step of a pass. Added,
// the pass goes on and writes the status against the updated object (no
// conflict); when it cannot be added, the pass ends with the error and
// writes no status, as KubeRay's.
func TestGCSFTFinalizerStep(t *testing.T) {
	errUpdate := errors.New("update refused")
	for name, fail := range map[string]bool{"added": false, "update fails": true} {
		t.Run(name, func(t *testing.T) {
			funcs := interceptor.Funcs{Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
				if fail {
					return errUpdate
				}
				return c.Update(ctx, obj, opts...)
			}}
			// Suspended, so that the first pass creates no Pods and does not
			// put its status off until the cache shows them.
			suspended := ftCluster(nil)
			suspended.Spec.Suspend = ptr.To(true)
			h := newHarnessWithFuncs(t, Options{GCSFTRedisCleanup: true}, funcs, suspended)
			_, err := h.reconcile("rc")
			rc := h.cluster("rc")
			if fail {
				if !errors.Is(err, errUpdate) || rc.Status.State != "" || len(rc.Status.Conditions) != 0 || len(h.pods(nil)) != 0 {
					t.Errorf("error %v, state %q, %d conditions, %d Pods; want the update's error and no status, no Pods",
						err, rc.Status.State, len(rc.Status.Conditions), len(h.pods(nil)))
				}
				return
			}
			if err != nil || !controllerutil.ContainsFinalizer(rc, rayv1.GCSFaultToleranceRedisCleanupFinalizer) || len(rc.Status.Conditions) == 0 {
				t.Errorf("error %v, finalizers %v, conditions %v; want the finalizer and the status in one pass",
					err, rc.Finalizers, rc.Status.Conditions)
			}
		})
	}
}
