package raycluster_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/controller/raycluster"
	"github.com/ray-operator/ray-operator/internal/dashboard"
	"github.com/ray-operator/ray-operator/internal/dashboard/dashboardtest"
	"github.com/ray-operator/ray-operator/internal/managerdeps"
	"github.com/ray-operator/ray-operator/internal/operator"
	"github.com/ray-operator/ray-operator/internal/testing/testenv"
)

// idleProbeInterval is the probe's interval on the fake clock.
const idleProbeInterval = 10 * time.Second

// dashboards hands each cluster its own dashboard, found by the cluster
// name its URL starts with ("<name>-head-svc.<ns>...").
type dashboards struct {
	mu      sync.Mutex
	clients map[string]dashboard.Client
}

func (d *dashboards) set(cluster string, c dashboard.Client) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.clients[cluster+"-head-svc."] = c
}

func (d *dashboards) provider(baseURL, _ string) (dashboard.Client, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for prefix, c := range d.clients {
		if strings.HasPrefix(baseURL, prefix) {
			return c, nil
		}
	}
	return nil, errors.New("no dashboard at " + baseURL)
}

// hungDashboard answers ListJobs only when the probe gives up.
type hungDashboard struct{ dashboard.Client }

func (hungDashboard) ListJobs(ctx context.Context) ([]dashboard.JobInfo, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

// newIdleWorld starts an operator whose RayCluster controller reaches the
// fake dashboards of d.
func newIdleWorld(t *testing.T, d *dashboards) *world {
	w := &world{World: testenv.NewWorld(t, testenv.Shared(t)), clock: clocktesting.NewFakeClock(time.Now())}
	opts := raycluster.Options{WatchNamespaces: []string{w.NS}, IdleProbeInterval: idleProbeInterval, IdleProbeTimeout: 200 * time.Millisecond}
	w.op = testenv.StartOperator(t, w.Env, operator.CacheOptions(w.NS), func(mgr manager.Manager) error {
		return raycluster.NewForManager(mgr, raycluster.Deps{Core: managerdeps.Core{Clock: w.clock}, Dashboards: d.provider}, opts).SetupWithManager(mgr, 1)
	})
	return w
}

func (w *world) idleCluster(name string, policy rayv1.IdleTerminationPolicy, labels map[string]string) {
	rc := w.newCluster(name)
	if policy != "" {
		rc.Spec.IdleTerminationOptions = &rayv1.IdleTerminationOptions{Policy: policy, TimeoutSeconds: 60}
	}
	rc.Labels = labels
	w.Create(rc)
}

// stepUntil steps the fake clock by the probe's interval until cond holds:
// a probe arms its next look only after it reports, so one step may come
// before the timer it should fire.
func (w *world) stepUntil(what string, cond func() bool) {
	w.T.Helper()
	w.Eventually(what, func() (bool, error) {
		if cond() {
			return true, nil
		}
		w.clock.Step(idleProbeInterval)
		return false, nil
	})
}

func idleCondition(s *rayv1.RayClusterStatus) *metav1.Condition {
	return meta.FindStatusCondition(s.Conditions, string(rayv1.RayClusterIdle))
}

func (w *world) waitIdle(name string, status metav1.ConditionStatus, reason string) *metav1.Condition {
	w.T.Helper()
	rc := w.waitStatus(name, "RayClusterIdle "+string(status)+" "+reason, func(s *rayv1.RayClusterStatus) bool {
		c := idleCondition(s)
		return c != nil && c.Status == status && c.Reason == reason
	})
	return idleCondition(&rc.Status)
}

// TestIdleClustersEnd: with spec.idleTerminationOptions, a standalone
// cluster whose dashboard shows no active job for timeoutSeconds is
// suspended or deleted, with an event and the RayClusterIdle condition; a
// running job, a hanging or failing dashboard restart the idle period and
// never end a cluster; a hanging dashboard does not hold the other
// clusters' passes; clusters without the option or made by a RayJob or a
// RayService are never looked at.
func TestIdleClustersEnd(t *testing.T) {
	d := &dashboards{clients: map[string]dashboard.Client{}}
	finished := dashboardtest.NewFake()
	finished.AddJob(dashboard.JobInfo{SubmissionID: "done", JobStatus: rayv1.JobStatusSucceeded})
	busy := dashboardtest.NewFake()
	busy.AddJob(dashboard.JobInfo{SubmissionID: "train", JobStatus: rayv1.JobStatusRunning})
	failing := dashboardtest.NewFake()
	failing.SetError(dashboardtest.OpListJobs, errors.New("503 Service Unavailable"))
	d.set("idle-suspend", finished)
	d.set("idle-delete", dashboardtest.NewFake())
	d.set("busy", busy)
	d.set("failing", failing)
	d.set("hung", hungDashboard{dashboardtest.NewFake()})
	for _, n := range []string{"unset", "job-made", "service-made"} {
		d.set(n, dashboardtest.NewFake()) // idle: only the rules keep them
	}
	w := newIdleWorld(t, d)
	w.idleCluster("hung", rayv1.IdleTerminationSuspend, nil)
	w.idleCluster("idle-suspend", rayv1.IdleTerminationSuspend, nil)
	w.idleCluster("idle-delete", rayv1.IdleTerminationDelete, nil)
	w.idleCluster("busy", rayv1.IdleTerminationSuspend, nil)
	w.idleCluster("failing", rayv1.IdleTerminationDelete, nil)
	w.idleCluster("unset", "", nil)
	w.idleCluster("job-made", rayv1.IdleTerminationDelete, map[string]string{rayv1.LabelOriginatedFromCRD: rayv1.KindRayJob})
	w.idleCluster("service-made", rayv1.IdleTerminationDelete, map[string]string{rayv1.LabelOriginatedFromCRD: rayv1.KindRayService})
	all := []string{"hung", "idle-suspend", "idle-delete", "busy", "failing", "unset", "job-made", "service-made"}
	for _, n := range all {
		w.RunPods(n, 1)
		w.waitStatus(n, "ready", func(s *rayv1.RayClusterStatus) bool { return s.State == rayv1.Ready })
	}

	t0 := w.clock.Now()
	for _, n := range []string{"idle-suspend", "idle-delete"} {
		if c := w.waitIdle(n, metav1.ConditionTrue, "NoActiveJobs"); c.LastTransitionTime.Unix() != t0.Unix() {
			t.Errorf("%s: idle since %v, want %v", n, c.LastTransitionTime, t0)
		}
	}
	w.waitIdle("busy", metav1.ConditionFalse, "JobsActive")
	w.waitIdle("failing", metav1.ConditionUnknown, "DashboardUnreadable")
	w.waitIdle("hung", metav1.ConditionUnknown, "DashboardUnreadable")

	// Past the threshold: the next look ends the idle clusters.
	w.clock.Step(60 * time.Second)
	w.stepUntil("idle-suspend suspended", func() bool {
		rc := w.RayCluster("idle-suspend")
		return rc != nil && rc.Status.State == rayv1.Suspended
	})
	rc := w.RayCluster("idle-suspend")
	if !ptr.Deref(rc.Spec.Suspend, false) {
		t.Error("idle-suspend: spec.suspend not set")
	}
	if c := idleCondition(&rc.Status); c == nil || c.Reason != "IdleTimeoutExceeded" || !strings.Contains(c.Message, "suspended") {
		t.Errorf("idle-suspend: RayClusterIdle = %+v, want reason IdleTimeoutExceeded saying suspended", c)
	}
	w.WaitEvent("idle-suspend", "IdleSuspended")
	w.WaitEvent("idle-delete", "IdleDeleted")
	w.Eventually("idle-delete deleted", func() (bool, error) { return w.RayCluster("idle-delete") == nil, nil })

	// The busy cluster's job ends, the failing dashboard recovers: both are
	// idle from now on, not from before: neither a running job nor an
	// unreadable dashboard counted as idle time.
	t1 := w.clock.Now()
	busy.SetJobStatus("train", rayv1.JobStatusSucceeded, "")
	failing.SetError(dashboardtest.OpListJobs, nil)
	for _, n := range []string{"busy", "failing"} {
		w.stepUntil(n+" idle", func() bool {
			c := idleCondition(&w.RayCluster(n).Status)
			return c != nil && c.Status == metav1.ConditionTrue
		})
		if c := w.waitIdle(n, metav1.ConditionTrue, "NoActiveJobs"); c.LastTransitionTime.Unix() < t1.Unix() {
			t.Errorf("%s: idle since %v, want not before %v", n, c.LastTransitionTime, t1)
		}
	}
	for _, n := range []string{"hung", "busy", "failing", "unset", "job-made", "service-made"} {
		rc := w.RayCluster(n)
		if rc == nil || ptr.Deref(rc.Spec.Suspend, false) || rc.Status.State != rayv1.Ready {
			t.Errorf("%s: ended or gone: %+v", n, rc)
			continue
		}
		if c := idleCondition(&rc.Status); c != nil && (n == "unset" || strings.HasSuffix(n, "-made")) {
			t.Errorf("%s: RayClusterIdle set: %+v", n, c)
		}
	}
	if c := idleCondition(&w.RayCluster("hung").Status); c == nil || c.Status != metav1.ConditionUnknown {
		t.Errorf("hung: RayClusterIdle = %+v, want Unknown", c)
	}
}

// TestIdleTimeSurvivesRestart: the idle period is kept in the status (the
// RayClusterIdle condition's lastTransitionTime), so an operator restart in
// the middle of it does not start it again; a resumed cluster starts a new
// one.
func TestIdleTimeSurvivesRestart(t *testing.T) {
	d := &dashboards{clients: map[string]dashboard.Client{}}
	d.set("idle", dashboardtest.NewFake())
	w := newIdleWorld(t, d)
	w.idleCluster("idle", rayv1.IdleTerminationSuspend, nil)
	w.RunPods("idle", 1)
	t0 := w.clock.Now()
	w.waitIdle("idle", metav1.ConditionTrue, "NoActiveJobs")

	w.op.Stop()
	w.clock.Step(30 * time.Second)
	w.op.Start()
	w.stepUntil("idle suspended", func() bool {
		rc := w.RayCluster("idle")
		return rc != nil && ptr.Deref(rc.Spec.Suspend, false)
	})
	c := w.waitIdle("idle", metav1.ConditionTrue, "IdleTimeoutExceeded")
	if c.LastTransitionTime.Unix() != t0.Unix() {
		t.Errorf("idle since %v, want %v (before the restart)", c.LastTransitionTime, t0)
	}

	// Resumed, it starts a new idle period instead of ending at once.
	w.waitStatus("idle", "suspended", func(s *rayv1.RayClusterStatus) bool { return s.State == rayv1.Suspended })
	resumed := w.clock.Now()
	w.edit("idle", func(rc *rayv1.RayCluster) { rc.Spec.Suspend = ptr.To(false) })
	w.RunPods("idle", 1)
	c = w.waitIdle("idle", metav1.ConditionTrue, "NoActiveJobs")
	if c.LastTransitionTime.Unix() < resumed.Unix() {
		t.Errorf("after the resume: idle since %v, want not before %v", c.LastTransitionTime, resumed)
	}
	if rc := w.RayCluster("idle"); ptr.Deref(rc.Spec.Suspend, false) {
		t.Error("suspended again right after the resume")
	}
}
