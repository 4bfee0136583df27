package cluster_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// rollingJobEntrypoint runs 40 three-second tasks that need a worker CPU
// (the head offers none), each retried if its worker goes, about a minute
// on the sample's two workers.
const rollingJobEntrypoint = `python -c "import time, ray; ray.init();
step = ray.remote(num_cpus=1, max_retries=10)(lambda i: time.sleep(3) or i);
print('total', sum(ray.get([step.remote(i) for i in range(40)])), flush=True)"`

// submitJobScript submits through the head's dashboard and prints the job id;
// jobStatus prints a job's status.
const (
	submitJobScript = `
from ray.job_submission import JobSubmissionClient
print("id", JobSubmissionClient("http://127.0.0.1:8265").submit_job(entrypoint=%q))
`
	jobStatus = `
from ray.job_submission import JobSubmissionClient
print("status", JobSubmissionClient("http://127.0.0.1:8265").get_job_status(%q))
`
)

// TestRollingWorkerUpdate (issue #24 item 3): the rolling-update sample's two
// workers are replaced one at a time (maxSurge 1, maxUnavailable 0) while a
// Ray job whose tasks need them runs: the job was running when the first
// old worker went and ends SUCCEEDED with every task's result; a watch of
// the workers never sees more than 3 Pods nor fewer than 2 ready ones; each
// batch has its event; the head stays. Each phase (cluster up and job
// running; the update; the job's end) has its own deadline: on a quiet
// 2-core machine they take 25 s, 38 s and a few seconds, and under CI's
// other lanes several times that.
func TestRollingWorkerUpdate(t *testing.T) {
	t.Parallel() // mostly waiting: see the package comment (main_test.go)
	began := time.Now()
	ns := shared.namespace(t)
	rc := shared.applySample(t, ns, "ray-cluster.rolling-update.yaml").(*rayv1.RayCluster)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	head := shared.waitHead(ctx, t, ns, rc.Name, "")
	shared.waitWorkerGroup(ctx, t, ns, rc.Name, 2)
	out, err := shared.rayPython(ctx, ns, head, fmt.Sprintf(submitJobScript, rollingJobEntrypoint))
	jobID := strings.TrimSpace(strings.TrimPrefix(lastLine(out), "id"))
	if err != nil || jobID == "" {
		t.Fatalf("submitting the job: %v\n%s", err, out)
	}
	shared.waitJobStatus(ctx, t, ns, head, jobID, "RUNNING")
	old, err := shared.rayPods(ctx, ns, rc.Name, "worker")
	if err != nil {
		t.Fatal(err)
	}
	watched := shared.watchWorkers(ctx, t, ns, rc.Name)
	t.Logf("cluster up and job %s running after %v", jobID, time.Since(began).Round(time.Second))

	rolledAt := time.Now()
	ctx, cancel = context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	shared.editCluster(ctx, t, ns, rc.Name, func(rc *rayv1.RayCluster) {
		c := &rc.Spec.WorkerGroupSpecs[0].Template.Spec.Containers[0]
		c.Env = append(c.Env, corev1.EnvVar{Name: "ROLLOUT", Value: "2"})
	})
	statusAtFirstDeletion := ""
	err = poll(ctx, func() (bool, error) {
		pods, err := shared.rayPods(ctx, ns, rc.Name, "worker")
		if err != nil {
			return false, err
		}
		if statusAtFirstDeletion == "" && watched.deleted() > 0 {
			statusAtFirstDeletion = shared.jobStatusOf(ctx, ns, head, jobID)
		}
		rolled := 0
		for i := range pods {
			if hasEnv(&pods[i], "ROLLOUT") && runningAndReady(&pods[i]) && !isOld(old, pods[i].Name) {
				rolled++
			}
		}
		return len(pods) == 2 && rolled == 2, fmt.Errorf("%d workers, %d rolled and ready: %s", len(pods), rolled, describeWorkers(pods, old))
	})
	if err != nil {
		t.Fatalf("the rolling update did not end: %v\nwhat the watch saw, from the update on:\n%s", err, watched.history(rolledAt))
	}
	t.Logf("workers rolled in %v:\n%s", time.Since(rolledAt).Round(time.Second), watched.history(rolledAt))
	ctx, cancel = context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	if !strings.Contains(statusAtFirstDeletion, "RUNNING") {
		t.Errorf("job status when the first old worker went: %q, want RUNNING (the job must run across the update)", statusAtFirstDeletion)
	}
	shared.waitJobStatus(ctx, t, ns, head, jobID, "SUCCEEDED")
	if logs, err := shared.rayPython(ctx, ns, head, fmt.Sprintf(jobLogs, jobID)); err != nil || !strings.Contains(logs, "total 780") {
		t.Errorf("driver output lacks the sum of all 40 tasks (%v):\n%s", err, logs)
	}
	maxPods, minReady := watched.extremes()
	if maxPods > 3 || minReady < 2 {
		t.Errorf("the watch saw up to %d workers and down to %d ready ones; want at most 3 (maxSurge 1) and at least 2 (maxUnavailable 0)", maxPods, minReady)
	}
	if n := shared.eventCount(ctx, t, ns, rc.Name, "RollingUpdateBatch"); n < 2 {
		t.Errorf("%d RollingUpdateBatch events, want one per batch (2)", n)
	}
	if h := shared.waitHead(ctx, t, ns, rc.Name, ""); h != head {
		t.Errorf("the head changed from %s to %s", head, h)
	}
	t.Logf("job SUCCEEDED %v after the update began; done in %v", time.Since(rolledAt).Round(time.Second), time.Since(began).Round(time.Second))
}

func lastLine(out string) string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	return lines[len(lines)-1]
}

// describeWorkers names each worker Pod with what the update's end waits
// for: old or rolled, ready, terminating.
func describeWorkers(pods []corev1.Pod, old []corev1.Pod) string {
	var out []string
	for i := range pods {
		p := &pods[i]
		state := "rolled"
		if isOld(old, p.Name) {
			state = "old"
		}
		state += fmt.Sprintf(" %s ready=%t", p.Status.Phase, runningAndReady(p))
		if p.DeletionTimestamp != nil {
			state += " terminating since " + p.DeletionTimestamp.Format(time.TimeOnly)
		}
		out = append(out, p.Name+" ("+state+")")
	}
	return strings.Join(out, ", ")
}

// isOld tells whether the Pod called name is one of old.
func isOld(old []corev1.Pod, name string) bool {
	return slices.ContainsFunc(old, func(o corev1.Pod) bool { return o.Name == name })
}

func hasEnv(p *corev1.Pod, name string) bool {
	return slices.ContainsFunc(p.Spec.Containers[0].Env, func(e corev1.EnvVar) bool { return e.Name == name })
}

// jobStatusOf reads a Ray job's status through the head's dashboard.
func (s *suite) jobStatusOf(ctx context.Context, ns, head, id string) string {
	out, err := s.rayPython(ctx, ns, head, fmt.Sprintf(jobStatus, id))
	if err != nil {
		return "error: " + err.Error()
	}
	return lastLine(out)
}

// waitJobStatus waits until a Ray job has the status want, and fails at
// once when it ends otherwise.
func (s *suite) waitJobStatus(ctx context.Context, t *testing.T, ns, head, id, want string) {
	t.Helper()
	var last string
	err := poll(ctx, func() (bool, error) {
		last = s.jobStatusOf(ctx, ns, head, id)
		if strings.Contains(last, "FAILED") || strings.Contains(last, "STOPPED") {
			return false, fmt.Errorf("job ended: %s", last)
		}
		return strings.Contains(last, want), nil
	})
	if err != nil || !strings.Contains(last, want) {
		logs, _ := s.rayPython(ctx, ns, head, fmt.Sprintf(jobLogs, id))
		t.Fatalf("job %s: %s, want %s (%v)\n%s", id, last, want, err, logs)
	}
}

// editCluster applies mutate to the latest RayCluster, retrying conflicts.
func (s *suite) editCluster(ctx context.Context, t *testing.T, ns, name string, mutate func(*rayv1.RayCluster)) {
	t.Helper()
	err := poll(ctx, func() (bool, error) {
		rc := &rayv1.RayCluster{}
		if err := s.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, rc); err != nil {
			return false, err
		}
		mutate(rc)
		err := s.Client.Update(ctx, rc)
		return err == nil, err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// eventCount counts the events regarding a RayCluster with reason.
func (s *suite) eventCount(ctx context.Context, t *testing.T, ns, name, reason string) int {
	t.Helper()
	list, err := s.Clientset.EventsV1().Events(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range list.Items {
		if e.Regarding.Name == name && e.Reason == reason {
			n++
		}
	}
	return n
}

// workerWatch follows a cluster's worker Pods from a List's
// resourceVersion on, so it sees every state the API server stored, and
// keeps the most Pods and the fewest ready (not terminating) ones seen.
type workerWatch struct {
	mu                sync.Mutex
	pods              map[string]*corev1.Pod
	maxPods, minReady int
	deletions         int
	// seen is each change of a Pod's phase, readiness or deletion, with
	// when the watch saw it.
	seen []sighting
}

type sighting struct {
	at   time.Time
	what string
}

func (s *suite) watchWorkers(ctx context.Context, t *testing.T, ns, cluster string) *workerWatch {
	t.Helper()
	sel := metav1.ListOptions{LabelSelector: "ray.io/cluster=" + cluster + ",ray.io/node-type=worker"}
	list, err := s.Clientset.CoreV1().Pods(ns).List(ctx, sel)
	if err != nil {
		t.Fatal(err)
	}
	w := &workerWatch{pods: map[string]*corev1.Pod{}}
	for i := range list.Items {
		w.pods[list.Items[i].Name] = &list.Items[i]
	}
	w.maxPods, w.minReady = len(w.pods), w.ready()
	sel.ResourceVersion = list.ResourceVersion
	watcher, err := s.Clientset.CoreV1().Pods(ns).Watch(ctx, sel)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(watcher.Stop)
	go func() {
		for ev := range watcher.ResultChan() {
			if pod, ok := ev.Object.(*corev1.Pod); ok {
				w.observe(ev.Type, pod)
			}
		}
	}()
	return w
}

func (w *workerWatch) observe(t watch.EventType, pod *corev1.Pod) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.note(t, w.pods[pod.Name], pod)
	switch t {
	case watch.Added, watch.Modified:
		if prev, ok := w.pods[pod.Name]; ok && prev.DeletionTimestamp == nil && pod.DeletionTimestamp != nil {
			w.deletions++
		}
		w.pods[pod.Name] = pod
	case watch.Deleted:
		if prev, ok := w.pods[pod.Name]; ok && prev.DeletionTimestamp == nil {
			w.deletions++
		}
		delete(w.pods, pod.Name)
	}
	w.maxPods, w.minReady = max(w.maxPods, len(w.pods)), min(w.minReady, w.ready())
}

// note records what changed between prev (nil if new) and pod.
func (w *workerWatch) note(t watch.EventType, prev, pod *corev1.Pod) {
	state := func(p *corev1.Pod) string {
		if p == nil {
			return ""
		}
		return fmt.Sprintf("%s ready=%t terminating=%t", p.Status.Phase, runningAndReady(p), p.DeletionTimestamp != nil)
	}
	if now := state(pod); t == watch.Deleted || now != state(prev) {
		w.seen = append(w.seen, sighting{at: time.Now(), what: fmt.Sprintf("%s %s: %s", t, pod.Name, now)})
	}
}

// history lists what the watch saw from since on, one change a line.
func (w *workerWatch) history(since time.Time) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var b strings.Builder
	for _, s := range w.seen {
		if !s.at.Before(since) {
			fmt.Fprintf(&b, "  +%v %s\n", s.at.Sub(since).Round(time.Second), s.what)
		}
	}
	return b.String()
}

func (w *workerWatch) ready() int {
	n := 0
	for _, p := range w.pods {
		if runningAndReady(p) {
			n++
		}
	}
	return n
}

func (w *workerWatch) deleted() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.deletions
}

func (w *workerWatch) extremes() (maxPods, minReady int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.maxPods, w.minReady
}
