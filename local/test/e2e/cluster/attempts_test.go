package cluster_test

import (
	"context"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// attemptWatch follows the namespace's Pods through a watch and records
// whether Pods of two execution attempts ever existed at once.
type attemptWatch struct {
	mu       sync.Mutex
	attempts map[string]string // Pod name -> its attempt label
	overlaps []string
	seen     map[string]bool // attempts whose Pods were seen
}

func watchAttempts(t *testing.T, ns string) *attemptWatch {
	t.Helper()
	w, err := shared.Clientset.CoreV1().Pods(ns).Watch(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	aw := &attemptWatch{attempts: map[string]string{}, seen: map[string]bool{}}
	go func() {
		for ev := range w.ResultChan() {
			pod, ok := ev.Object.(*corev1.Pod)
			if ok {
				aw.observe(ev.Type, pod)
			}
		}
	}()
	t.Cleanup(w.Stop)
	return aw
}

func (aw *attemptWatch) observe(kind watch.EventType, pod *corev1.Pod) {
	aw.mu.Lock()
	defer aw.mu.Unlock()
	if kind == watch.Deleted {
		delete(aw.attempts, pod.Name)
		return
	}
	a := pod.Labels[rayv1.LabelExecutionAttempt]
	aw.attempts[pod.Name] = a
	aw.seen[a] = true
	for name, other := range aw.attempts {
		if other != a {
			aw.overlaps = append(aw.overlaps, pod.Name+" (attempt "+a+") while "+name+" (attempt "+other+") exists")
		}
	}
}

// TestRayJobBlockingRecreate: the BlockingRecreate sample with real Ray.
// Its entrypoint reads the attempt's number, which the head gets from its
// label through the downward API: attempt 1 fails, the retry's attempt 2
// succeeds. A watch of the namespace's Pods sees no Pod of attempt 2 while
// one of attempt 1 exists; the status counts one failure and one success
// and names attempt 2.
func TestRayJobBlockingRecreate(t *testing.T) {
	t.Parallel() // mostly waiting: see the package comment (main_test.go)
	began := time.Now()
	ns := shared.namespace(t)
	aw := watchAttempts(t, ns)
	job := shared.applySample(t, ns, "ray-job.blocking-recreate.yaml").(*rayv1.RayJob)
	done := shared.waitRayJobState(t, ns, job.Name, 8*time.Minute, func(j *rayv1.RayJob) bool {
		return j.Status.JobDeploymentStatus == rayv1.JobDeploymentStatusComplete ||
			(j.Status.JobDeploymentStatus == rayv1.JobDeploymentStatusFailed && ptr.Deref(j.Status.Failed, 0) >= 2)
	})
	st := done.Status
	t.Logf("RayJob %s: %s/%s after %v, failed %d, succeeded %d, attempt %d", job.Name, st.JobDeploymentStatus, st.JobStatus,
		time.Since(began).Round(time.Second), ptr.Deref(st.Failed, 0), ptr.Deref(st.Succeeded, 0), ptr.Deref(st.ExecutionAttempt, 0))
	if st.JobStatus != rayv1.JobStatusSucceeded || ptr.Deref(st.Failed, 0) != 1 || ptr.Deref(st.Succeeded, 0) != 1 ||
		ptr.Deref(st.ExecutionAttempt, 0) != 2 {
		t.Errorf("want SUCCEEDED on attempt 2 after one failure; status %+v", st)
	}
	aw.mu.Lock()
	defer aw.mu.Unlock()
	if len(aw.overlaps) != 0 {
		t.Errorf("Pods of two attempts at once: %v", aw.overlaps)
	}
	if !aw.seen["1"] || !aw.seen["2"] {
		t.Errorf("Pods seen of attempts %v, want 1 and 2", aw.seen)
	}
	events, err := shared.Clientset.EventsV1().Events(ns).List(context.Background(), metav1.ListOptions{})
	if err == nil {
		for _, e := range events.Items {
			if e.Reason == "WaitingForPreviousAttemptPods" {
				t.Logf("event %s: %s", e.Reason, e.Note)
			}
		}
	}
}
