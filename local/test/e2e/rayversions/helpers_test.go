package rayversions_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/local/internal/e2eutil"
)

// submitterLogs returns the logs of the submitter containers of the
// RayJob's Kubernetes Job.
func (s *suite) submitterLogs(t *testing.T, ns, job string) string {
	t.Helper()
	pods := &corev1.PodList{}
	if err := s.Client.List(t.Context(), pods, client.InNamespace(ns), client.MatchingLabels{"batch.kubernetes.io/job-name": job}); err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) == 0 {
		t.Fatalf("no submitter Pod of Job %s", job)
	}
	var all strings.Builder
	for _, p := range pods.Items {
		all.WriteString(s.Logs(t.Context(), ns, p.Name, "ray-job-submitter", nil))
	}
	return all.String()
}

// redisKeys lists every key of the namespace's Redis (redis-cli in its
// Pod); only the shared cluster writes there.
func (s *suite) redisKeys(t *testing.T, ns string) []string {
	t.Helper()
	pods := &corev1.PodList{}
	if err := s.Client.List(t.Context(), pods, client.InNamespace(ns), client.MatchingLabels{"app": "redis"}); err != nil || len(pods.Items) != 1 {
		t.Fatalf("want one Redis Pod, have %d (%v)", len(pods.Items), err)
	}
	out, err := s.Kubectl(t.Context(), "exec", "-n", ns, pods.Items[0].Name, "--", "redis-cli", "--scan", "--pattern", "*")
	if err != nil {
		t.Fatalf("listing Redis keys: %v", err)
	}
	return strings.Fields(out)
}

// cleanupRun is what deleting the shared RayCluster showed of its Redis
// cleanup Job.
type cleanupRun struct {
	// failed is the reason and message of the RayCluster's
	// RedisCleanupJobFailed Warning, empty when there was none.
	failed string
	// logs are the logs of the Job's Pod; exitCodes the exit codes of its
	// terminated containers.
	logs      string
	exitCodes []int32
}

// deleteCluster deletes the shared RayCluster and waits until it is gone,
// which its Redis cleanup finalizer allows once the cleanup Job has
// finished, and returns what the Job did. The deletion must not have been
// forced (ForceDeletedStuckCluster); whether the Job may have failed is
// the caller's to judge.
func (s *suite) deleteCluster(ctx context.Context, t *testing.T, ns string) cleanupRun {
	t.Helper()
	rc := &rayv1.RayCluster{}
	rc.Namespace, rc.Name = ns, clusterName
	if err := s.Client.Delete(ctx, rc); err != nil {
		t.Fatal(err)
	}
	jobKey := client.ObjectKey{Namespace: ns, Name: clusterName + "-redis-cleanup"}
	seen := false
	var run cleanupRun
	err := e2eutil.Poll(ctx, e2eutil.PollInterval, func() (bool, error) {
		if s.Client.Get(ctx, jobKey, &batchv1.Job{}) == nil {
			seen = true
			run.logs, run.exitCodes = s.jobLogs(ctx, ns, jobKey.Name, run.logs, run.exitCodes)
		}
		err := s.Client.Get(ctx, client.ObjectKeyFromObject(rc), &rayv1.RayCluster{})
		return apierrors.IsNotFound(err), fmt.Errorf("cleanup Job seen %v; cluster: %v", seen, err)
	})
	if err != nil {
		t.Fatalf("RayCluster %s is not gone: %v", clusterName, err)
	}
	if !seen {
		t.Fatalf("RayCluster %s went away without a Redis cleanup Job", clusterName)
	}
	events := &corev1.EventList{}
	if err := s.Client.List(ctx, events, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, e := range events.Items {
		switch e.Reason {
		case "ForceDeletedStuckCluster":
			t.Fatalf("RayCluster %s: %s %s\nthe cleanup Job's logs:\n%s", clusterName, e.Reason, e.Message, run.logs)
		case "RedisCleanupJobFailed":
			run.failed = e.Reason + " " + e.Message
		}
	}
	return run
}

// waitRayService waits until the hello RayService serves from one cluster
// (e2eutil.ServingOneCluster) and returns it.
func (s *suite) waitRayService(t *testing.T, ns string) *rayv1.RayService {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), clusterTimeout)
	defer cancel()
	rs := &rayv1.RayService{}
	err := e2eutil.Poll(ctx, e2eutil.PollInterval, func() (bool, error) {
		if err := s.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: e2eutil.HelloName}, rs); err != nil {
			return false, err
		}
		err := e2eutil.ServingOneCluster(rs)
		return err == nil, err
	})
	if err != nil {
		t.Fatalf("RayService %s is not serving: %v", e2eutil.HelloName, err)
	}
	return rs
}

// waitAnswer waits until url answers want: the Ready condition counts
// endpoints, which kube-proxy turns into rules a moment later.
func (s *suite) waitAnswer(t *testing.T, url, want string) {
	t.Helper()
	loop := e2eutil.StartRequestLoop(url)
	defer loop.Finish()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	err := e2eutil.Poll(ctx, e2eutil.PollInterval, func() (bool, error) {
		return loop.Answered(want) > 0, fmt.Errorf("no answer %q yet", want)
	})
	if err != nil {
		t.Fatalf("%s did not answer %q: %v", url, want, err)
	}
}

// jobLogs returns the logs of the Job's Pods and the exit codes of their
// containers once one has ended (read while the Job is there: it goes with
// its RayCluster), else previous and previousCodes.
func (s *suite) jobLogs(ctx context.Context, ns, job, previous string, previousCodes []int32) (string, []int32) {
	pods := &corev1.PodList{}
	if err := s.Client.List(ctx, pods, client.InNamespace(ns), client.MatchingLabels{"batch.kubernetes.io/job-name": job}); err != nil {
		return previous, previousCodes
	}
	var all strings.Builder
	var codes []int32
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			all.WriteString(s.Logs(ctx, ns, p.Name, p.Spec.Containers[0].Name, nil))
			for _, c := range p.Status.ContainerStatuses {
				if c.State.Terminated != nil {
					codes = append(codes, c.State.Terminated.ExitCode)
				}
			}
		}
	}
	if all.Len() == 0 {
		return previous, previousCodes
	}
	return all.String(), codes
}

// removeCluster deletes the shared RayCluster if it is still there and
// waits until it is gone or caseTimeout passes, while its Redis runs; what
// a test checks of the deletion is in deleteCluster.
func (s *suite) removeCluster(ns string) {
	ctx, cancel := context.WithTimeout(context.Background(), caseTimeout)
	defer cancel()
	rc := &rayv1.RayCluster{}
	rc.Namespace, rc.Name = ns, clusterName
	if err := s.Client.Delete(ctx, rc); err != nil {
		return
	}
	_ = e2eutil.Poll(ctx, e2eutil.PollInterval, func() (bool, error) {
		err := s.Client.Get(ctx, client.ObjectKeyFromObject(rc), &rayv1.RayCluster{})
		return apierrors.IsNotFound(err), err
	})
}
