package cluster_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/local/internal/e2eutil"
)

// The external-Redis sample's Redis password and storage namespace.
const (
	samplePassword         = "change-me-redis"
	sampleStorageNamespace = "raycluster-external-redis"
)

// gcsFTTimeout bounds each phase: Redis, a head and a worker start; the
// new head starts and recovers from Redis; the cleanup Job runs.
const gcsFTTimeout = 4 * time.Minute

// TestGCSFaultToleranceRedis: the external-Redis sample. A detached actor
// created before the head Pod is deleted still answers with its state once
// the operator's new head has recovered the cluster from Redis, and the
// worker it lives on kept running. Deleting the RayCluster runs the Redis
// cleanup Job, which removes the cluster's keys from Redis.
func TestGCSFaultToleranceRedis(t *testing.T) {
	t.Parallel() // mostly waiting: see the package comment (main_test.go)
	began := time.Now()
	ns := shared.namespace(t)
	rc := shared.applySample(t, ns, "ray-cluster.external-redis.yaml").(*rayv1.RayCluster)
	ctx, cancel := context.WithTimeout(t.Context(), 4*gcsFTTimeout)
	defer cancel()
	head := shared.waitHead(ctx, t, ns, rc.Name, "")
	worker := shared.workerPod(ctx, t, ns, rc.Name)
	out, err := shared.rayPython(ctx, ns, head, e2eutil.CreateCounter)
	if err != nil || !strings.Contains(out, "count 1") {
		t.Fatalf("creating the detached actor: %v\n%s", err, out)
	}
	if keys := shared.redisKeys(ctx, t, ns); len(keys) == 0 {
		t.Fatalf("Redis holds no key of storage namespace %s after the actor was created", sampleStorageNamespace)
	}
	t.Logf("cluster up, actor created after %v", time.Since(began).Round(time.Second))

	shared.deletePod(ctx, t, ns, head)
	newHead := shared.waitHead(ctx, t, ns, rc.Name, head)
	out = shared.retryPython(ctx, t, ns, newHead, e2eutil.ReadCounter)
	if !strings.Contains(out, "count 1") {
		t.Fatalf("the detached actor lost its state across the head's restart:\n%s", out)
	}
	if w := shared.workerPod(ctx, t, ns, rc.Name); w.UID != worker.UID || restarts(w) != restarts(worker) {
		t.Fatalf("the worker did not keep running while the head was replaced: was %s (%d restarts), now %s (%d restarts)",
			worker.UID, restarts(worker), w.UID, restarts(w))
	}
	t.Logf("new head %s answered after %v", newHead, time.Since(began).Round(time.Second))

	shared.deleteGCSFTCluster(ctx, t, rc)
	if keys := shared.redisKeys(ctx, t, ns); len(keys) != 0 {
		t.Fatalf("Redis still holds keys of storage namespace %s after the RayCluster was deleted: %v", sampleStorageNamespace, keys)
	}
	t.Logf("done in %v", time.Since(began).Round(time.Second))
}

// workerPod returns the cluster's only worker Pod.
func (s *suite) workerPod(ctx context.Context, t *testing.T, ns, cluster string) *corev1.Pod {
	t.Helper()
	pods, err := s.rayPods(ctx, ns, cluster, "worker")
	if err != nil || len(pods) != 1 {
		t.Fatalf("want one worker Pod of %s, have %d (%v)", cluster, len(pods), err)
	}
	return &pods[0]
}

func restarts(p *corev1.Pod) int32 { return e2eutil.Restarts(p) }

// deletePod deletes a Pod and waits until it is gone.
func (s *suite) deletePod(ctx context.Context, t *testing.T, ns, name string) {
	t.Helper()
	s.DeletePod(ctx, t, ns, name, gcsFTTimeout)
}

// retryPython runs a script in the head until it succeeds (a restarted
// GCS takes a while to answer) and returns what it printed.
func (s *suite) retryPython(ctx context.Context, t *testing.T, ns, pod, script string) string {
	t.Helper()
	return s.RetryPython(ctx, t, ns, pod, "ray-head", script, gcsFTTimeout)
}

// redisKeys lists the keys of the sample's storage namespace, read with
// redis-cli in the Redis Pod.
func (s *suite) redisKeys(ctx context.Context, t *testing.T, ns string) []string {
	t.Helper()
	pods := &corev1.PodList{}
	if err := s.Client.List(ctx, pods, client.InNamespace(ns), client.MatchingLabels{"app": "redis"}); err != nil || len(pods.Items) != 1 {
		t.Fatalf("want one Redis Pod, have %d (%v)", len(pods.Items), err)
	}
	out, err := s.kubectl(ctx, "exec", "-n", ns, pods.Items[0].Name, "--",
		"redis-cli", "-a", samplePassword, "--no-auth-warning", "--scan", "--pattern", "*"+sampleStorageNamespace+"*")
	if err != nil {
		t.Fatalf("listing Redis keys: %v", err)
	}
	return strings.Fields(out)
}

// deleteGCSFTCluster deletes the RayCluster and waits until it is gone,
// which its Redis cleanup finalizer allows once the cleanup Job has
// finished. The Job must have been there, and no Warning may say that it
// failed or that the deletion was forced past it. (Whether it succeeded is
// read from Redis afterwards: the Job goes with its RayCluster.)
func (s *suite) deleteGCSFTCluster(ctx context.Context, t *testing.T, rc *rayv1.RayCluster) {
	t.Helper()
	if err := s.Client.Delete(ctx, rc); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(ctx, gcsFTTimeout)
	defer cancel()
	jobKey := types.NamespacedName{Namespace: rc.Namespace, Name: rc.Name + "-redis-cleanup"}
	seen := false
	err := poll(ctx, func() (bool, error) {
		if s.Client.Get(ctx, jobKey, &batchv1.Job{}) == nil {
			seen = true
		}
		err := s.Client.Get(ctx, client.ObjectKeyFromObject(rc), &rayv1.RayCluster{})
		return apierrors.IsNotFound(err), fmt.Errorf("cleanup Job seen %v; cluster: %v", seen, err)
	})
	if err != nil {
		t.Fatalf("RayCluster %s is not gone: %v", rc.Name, err)
	}
	if !seen {
		t.Fatalf("RayCluster %s went away without a Redis cleanup Job %s", rc.Name, jobKey.Name)
	}
	events := &corev1.EventList{}
	if err := s.Client.List(ctx, events, client.InNamespace(rc.Namespace)); err != nil {
		t.Fatal(err)
	}
	for _, e := range events.Items {
		if e.Reason == "RedisCleanupJobFailed" || e.Reason == "ForceDeletedStuckCluster" {
			t.Fatalf("RayCluster %s: %s %s", rc.Name, e.Reason, e.Message)
		}
	}
}
