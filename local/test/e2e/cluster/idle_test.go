package cluster_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/dashboard"
	"github.com/ray-operator/ray-operator/local/internal/e2eutil"
)

// idleTimeout is the clusters' idleTerminationOptions.timeoutSeconds: more
// than the operator's probe interval (10 s), so that a job's start is seen
// before the threshold passes.
const idleTimeout = 15

// idleReadyTimeout bounds the start of the two heads at once.
const idleReadyTimeout = 3 * time.Minute

// idleDriver is a driver started with ray.init() in the head, not through
// the Job API: it holds its connection until the file idleDriverRelease
// exists (at most two minutes), then exits.
const (
	idleDriverRelease = "/tmp/e2e-idle-driver-release"
	idleDriver        = `
import os, time
import ray
ray.init()
deadline = time.time() + 120
while not os.path.exists("` + idleDriverRelease + `") and time.time() < deadline:
    time.sleep(0.2)
print("driver done")
`
)

// idleRayCluster is a head-only RayCluster with a small CPU request (two
// fit the node's CPUs at once) and a short grace period.
func idleRayCluster(ns, name string) *rayv1.RayCluster {
	return &rayv1.RayCluster{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: rayv1.RayClusterSpec{
			RayVersion: "2.60.0",
			HeadGroupSpec: rayv1.HeadGroupSpec{
				RayStartParams: map[string]string{},
				Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
					TerminationGracePeriodSeconds: ptr.To[int64](e2eutil.HelloGracePeriod),
					Containers: []corev1.Container{{
						Name:  "ray-head",
						Image: "rayproject/ray:2.60.0",
						Ports: []corev1.ContainerPort{
							{Name: "gcs-server", ContainerPort: 6379},
							{Name: "dashboard", ContainerPort: 8265},
							{Name: "client", ContainerPort: 10001},
						},
						Resources: corev1.ResourceRequirements{
							Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("400m"), corev1.ResourceMemory: resource.MustParse("1Gi")},
							Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("2Gi")},
						},
					}},
				}},
			},
		},
	}
}

// TestIdleClustersEndRealRay: spec.idleTerminationOptions with real Ray. Two
// standalone clusters get the same threshold, the busy one first. The
// finished one's submitted job ends; it is suspended no sooner than the
// threshold after the job's end. By then the busy one, a candidate for
// longer, is neither suspended nor deleted: its submitted job runs, and a
// ray.init() driver connected in its head is listed by the dashboard as a
// RUNNING DRIVER. Once the job is stopped, a look that names the driver as
// the activity still keeps the cluster; once the driver exits, the cluster
// is deleted (policy Delete) no sooner than the threshold after its end.
func TestIdleClustersEndRealRay(t *testing.T) {
	t.Parallel() // mostly waiting: see the package comment (main_test.go)
	began := time.Now()
	ns := shared.namespace(t)
	for _, name := range []string{"idle-busy", "idle-finished"} {
		if err := shared.Client.Create(t.Context(), idleRayCluster(ns, name)); err != nil {
			t.Fatal(err)
		}
	}
	busyDash := shared.idleDashboard(t, ns, "idle-busy")
	finishedDash := shared.idleDashboard(t, ns, "idle-finished")
	t.Logf("both clusters ready after %v", time.Since(began).Round(time.Second))

	busyJob := submitJob(t, busyDash, "sleep 600")
	driverDone := shared.startIdleDriver(t, ns, "idle-busy")
	driver := waitDriver(t, busyDash)
	finishedJob := submitJob(t, finishedDash, "sleep 12")
	shared.setIdleTermination(t, ns, "idle-busy", rayv1.IdleTerminationDelete)
	shared.setIdleTermination(t, ns, "idle-finished", rayv1.IdleTerminationSuspend)
	optionsSet := time.Now()

	shared.waitIdleCondition(t, ns, "idle-finished", "the finished cluster's job seen running", func(c *metav1.Condition) bool {
		return c.Status == metav1.ConditionFalse && strings.Contains(c.Message, finishedJob)
	})
	jobEnd := waitJobEnd(t, finishedDash, finishedJob)
	finished := shared.waitIdleCondition(t, ns, "idle-finished", "the finished cluster suspended", func(c *metav1.Condition) bool {
		return c.Reason == "IdleTimeoutExceeded"
	})
	suspended := shared.idleEvent(t, ns, "idle-finished", "IdleSuspended")
	t.Logf("finished cluster: job ended %v after the options were set, suspended %v after its end",
		jobEnd.Sub(optionsSet).Round(time.Second), suspended.Sub(jobEnd).Round(100*time.Millisecond))
	checkEndedAfterIdle(t, "idle-finished", finished, jobEnd, suspended)
	shared.waitSuspendedState(t, ns, "idle-finished")

	// The busy cluster has been a candidate longer, with the same threshold.
	// Ray lists submitted jobs before drivers, so the condition names the
	// job while it runs and the driver once a look finds the job stopped.
	shared.checkBusy(t, ns, "idle-busy", busyJob)
	stopJob(t, busyDash, busyJob)
	shared.waitIdleCondition(t, ns, "idle-busy", "a look after the job stopped naming the driver", func(c *metav1.Condition) bool {
		return c.Status == metav1.ConditionFalse && strings.Contains(c.Message, "job "+driver+" is RUNNING")
	})
	shared.checkBusy(t, ns, "idle-busy", driver)
	shared.releaseDriver(t, ns, "idle-busy", driverDone)
	driverEnd := waitJobEnd(t, busyDash, driver)
	shared.waitClusterGone(t, ns, "idle-busy", 2*time.Minute)
	deleted := shared.idleEvent(t, ns, "idle-busy", "IdleDeleted")
	t.Logf("busy cluster: deleted %v after its driver ended", deleted.Sub(driverEnd).Round(100*time.Millisecond))
	if earliest := driverEnd.Add(idleTimeout*time.Second - time.Second); deleted.Before(earliest) {
		t.Errorf("idle-busy was deleted at %v, before its driver's end %v plus the threshold", deleted, driverEnd)
	}
	t.Logf("TestIdleClustersEndRealRay: %v", time.Since(began).Round(time.Second))
}

// idleDashboard waits until the cluster is ready and returns a client of its
// dashboard at the head Pod's IP (the head Service is headless).
func (s *suite) idleDashboard(t *testing.T, ns, name string) dashboard.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), idleReadyTimeout)
	defer cancel()
	rc := &rayv1.RayCluster{}
	err := poll(ctx, func() (bool, error) {
		if err := s.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, rc); err != nil {
			return false, err
		}
		return rc.Status.State == rayv1.Ready, fmt.Errorf("state %q", rc.Status.State)
	})
	if err != nil {
		t.Fatalf("RayCluster %s is not ready: %v", name, err)
	}
	pods, err := s.rayPods(t.Context(), ns, name, "head")
	if err != nil || len(pods) != 1 || pods[0].Status.PodIP == "" {
		t.Fatalf("want one head Pod of %s with an IP, have %d (%v)", name, len(pods), err)
	}
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{Proxy: nil}}
	c, err := dashboard.NewHTTPClient(net.JoinHostPort(pods[0].Status.PodIP, "8265"), "", dashboard.WithHTTPClient(hc))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func submitJob(t *testing.T, c dashboard.Client, entrypoint string) string {
	t.Helper()
	id, err := c.SubmitJob(t.Context(), &dashboard.JobSubmitRequest{Entrypoint: entrypoint})
	if err != nil {
		t.Fatalf("submitting %q: %v", entrypoint, err)
	}
	return id
}

func stopJob(t *testing.T, c dashboard.Client, id string) {
	t.Helper()
	if err := c.StopJob(t.Context(), id); err != nil {
		t.Fatalf("stopping job %s: %v", id, err)
	}
}

// findJob returns the job of the list whose submission id, or else job id,
// is id.
func findJob(jobs []dashboard.JobInfo, id string) *dashboard.JobInfo {
	for i := range jobs {
		if jobs[i].SubmissionID == id || (jobs[i].SubmissionID == "" && jobs[i].JobID == id) {
			return &jobs[i]
		}
	}
	return nil
}

// waitJobEnd waits until the dashboard lists the job as ended and returns
// its end time.
func waitJobEnd(t *testing.T, c dashboard.Client, id string) time.Time {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	var end time.Time
	err := poll(ctx, func() (bool, error) {
		jobs, err := c.ListJobs(ctx)
		if err != nil {
			return false, err
		}
		j := findJob(jobs, id)
		if j == nil {
			return false, fmt.Errorf("job %s is not listed", id)
		}
		end = time.UnixMilli(int64(j.EndTime))
		return rayv1.IsJobTerminal(j.JobStatus) && j.EndTime > 0, fmt.Errorf("job %s is %s", id, j.JobStatus)
	})
	if err != nil {
		t.Fatalf("waiting for the end of job %s: %v", id, err)
	}
	return end
}

// startIdleDriver runs idleDriver in the cluster's head (kubectl exec) and
// returns a channel that gets its outcome once it exits.
func (s *suite) startIdleDriver(t *testing.T, ns, cluster string) <-chan error {
	t.Helper()
	head := s.headPod(t, ns, cluster)
	done := make(chan error, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	go func() {
		defer cancel()
		out, err := s.rayPython(ctx, ns, head, idleDriver)
		if err == nil && !strings.Contains(out, "driver done") {
			err = fmt.Errorf("the driver printed %q", out)
		}
		done <- err
	}()
	return done
}

// waitDriver waits until the dashboard lists a RUNNING job of type DRIVER
// (the ray.init() driver) and returns its job id.
func waitDriver(t *testing.T, c dashboard.Client) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	var id string
	err := poll(ctx, func() (bool, error) {
		jobs, err := c.ListJobs(ctx)
		if err != nil {
			return false, err
		}
		for _, j := range jobs {
			if j.Type == "DRIVER" && j.JobStatus == rayv1.JobStatusRunning && j.SubmissionID == "" {
				id = j.JobID
				return true, nil
			}
		}
		return false, fmt.Errorf("jobs %+v", jobs)
	})
	if err != nil {
		t.Fatalf("the ray.init() driver is not listed as a RUNNING DRIVER: %v", err)
	}
	return id
}

// releaseDriver lets the driver exit and waits until it has.
func (s *suite) releaseDriver(t *testing.T, ns, cluster string, done <-chan error) {
	t.Helper()
	head := s.headPod(t, ns, cluster)
	if out, err := s.kubectl(t.Context(), "exec", "-n", ns, head, "-c", "ray-head", "--", "touch", idleDriverRelease); err != nil {
		t.Fatalf("releasing the driver: %v\n%s", err, out)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("the driver: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the driver did not exit within a minute of its release")
	}
}

// setIdleTermination sets the cluster's idleTerminationOptions.
func (s *suite) setIdleTermination(t *testing.T, ns, name string, policy rayv1.IdleTerminationPolicy) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		rc := &rayv1.RayCluster{}
		if err := s.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, rc); err != nil {
			return err
		}
		rc.Spec.IdleTerminationOptions = &rayv1.IdleTerminationOptions{Policy: policy, TimeoutSeconds: idleTimeout}
		return s.Client.Update(t.Context(), rc)
	})
	if err != nil {
		t.Fatalf("setting idleTerminationOptions on %s: %v", name, err)
	}
}

// waitIdleCondition waits until the cluster's RayClusterIdle condition
// passes ok and returns the cluster.
func (s *suite) waitIdleCondition(t *testing.T, ns, name, what string, ok func(*metav1.Condition) bool) *rayv1.RayCluster {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	rc := &rayv1.RayCluster{}
	err := poll(ctx, func() (bool, error) {
		if err := s.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, rc); err != nil {
			return false, err
		}
		c := meta.FindStatusCondition(rc.Status.Conditions, string(rayv1.RayClusterIdle))
		return c != nil && ok(c), fmt.Errorf("RayClusterIdle is %+v", c)
	})
	if err != nil {
		t.Fatalf("RayCluster %s: waiting for %s: %v", name, what, err)
	}
	return rc
}

// checkEndedAfterIdle checks that the idle period the condition records
// began no sooner than the last activity, and that the cluster ended no
// sooner than the threshold after it. The condition's time is in seconds.
func checkEndedAfterIdle(t *testing.T, name string, rc *rayv1.RayCluster, lastActivity, ended time.Time) {
	t.Helper()
	c := meta.FindStatusCondition(rc.Status.Conditions, string(rayv1.RayClusterIdle))
	if c.Status != metav1.ConditionTrue || !ptr.Deref(rc.Spec.Suspend, false) {
		t.Errorf("%s: RayClusterIdle %+v, suspend %v; want True/IdleTimeoutExceeded and suspend true", name, c, rc.Spec.Suspend)
	}
	since := c.LastTransitionTime.Time
	if since.Before(lastActivity.Truncate(time.Second)) {
		t.Errorf("%s: idle since %v, before its job ended at %v", name, since, lastActivity)
	}
	if earliest := lastActivity.Add(idleTimeout*time.Second - time.Second); ended.Before(earliest) || ended.Sub(since) < idleTimeout*time.Second-time.Second {
		t.Errorf("%s: ended at %v, idle since %v, job ended at %v: sooner than the threshold (%ds)", name, ended, since, lastActivity, idleTimeout)
	}
}

// checkBusy checks that the cluster is neither suspended nor deleted and
// that its last look named activity as what keeps it busy.
func (s *suite) checkBusy(t *testing.T, ns, name, activity string) {
	t.Helper()
	rc := &rayv1.RayCluster{}
	if err := s.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, rc); err != nil {
		t.Fatalf("RayCluster %s: %v", name, err)
	}
	c := meta.FindStatusCondition(rc.Status.Conditions, string(rayv1.RayClusterIdle))
	switch {
	case ptr.Deref(rc.Spec.Suspend, false) || !rc.DeletionTimestamp.IsZero() || rc.Status.State != rayv1.Ready:
		t.Fatalf("%s was ended while busy: suspend %v, deleting %v, state %q", name, rc.Spec.Suspend, rc.DeletionTimestamp, rc.Status.State)
	case c == nil || c.Status != metav1.ConditionFalse || c.Reason != "JobsActive" || !strings.Contains(c.Message, activity):
		t.Fatalf("%s: RayClusterIdle %+v, want False/JobsActive naming %s", name, c, activity)
	}
}

// waitSuspendedState waits until a suspended cluster's Pods are gone.
func (s *suite) waitSuspendedState(t *testing.T, ns, name string) {
	t.Helper()
	waitFor(t, name+" suspended", func() (bool, error) {
		rc := &rayv1.RayCluster{}
		if err := s.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, rc); err != nil {
			return false, err
		}
		pods, err := s.rayPods(t.Context(), ns, name, "head")
		return rc.Status.State == rayv1.Suspended && err == nil && len(pods) == 0,
			fmt.Errorf("state %q, %d head Pods (%v)", rc.Status.State, len(pods), err)
	})
}

// idleEvent returns the time of the only event of reason about the cluster.
func (s *suite) idleEvent(t *testing.T, ns, name, reason string) time.Time {
	t.Helper()
	var at []time.Time
	waitFor(t, fmt.Sprintf("event %s of %s", reason, name), func() (bool, error) {
		events, err := s.Clientset.EventsV1().Events(ns).List(t.Context(), metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		at = at[:0]
		for _, e := range events.Items {
			if e.Regarding.Name == name && e.Reason == reason {
				at = append(at, e.EventTime.Time)
			}
		}
		return len(at) > 0, fmt.Errorf("no event %s", reason)
	})
	if len(at) != 1 {
		t.Errorf("%d events %s of %s, want 1", len(at), reason, name)
	}
	return at[0]
}
