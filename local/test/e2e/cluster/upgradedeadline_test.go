package cluster_test

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/local/internal/e2eutil"
)

// pendingTimeout is the hello RayService's
// upgradeStrategy.pendingClusterTimeoutSeconds while its upgrade goes to
// an image the node cannot run: short, since that cluster can never be
// ready.
const pendingTimeout = 25

// fixedTimeout is the deadline the fixing change sets with the runnable
// spec. Taking over means a started head and a deployed Serve app: about
// 15 s on a quiet machine, over 25 s on a cold one with the suite's other
// tests running (a CI run saw the fixed attempt abandoned too).
const fixedTimeout = 300

// unrunnableImage is an image the local node cannot run: its head waits
// with ErrImagePull for ever.
const unrunnableImage = "e2e.invalid/no-such-image:1"

// TestRayServiceUpgradeAbandoned: the hello RayService with a pending
// cluster deadline, upgraded to a head image the node cannot run, while a
// request loop runs against the serve Service. The pending cluster never
// becomes ready; after the deadline the upgrade is abandoned
// (UpgradeAbandoned=True/PendingClusterTimeout, Warning event
// PendingClusterTimeout), the pending cluster is deleted and the active one
// is the only one left, still serving. A fixing spec change (with a longer
// deadline) starts a new attempt (UpgradeRetried) that takes over; no
// request of the loop failed.
func TestRayServiceUpgradeAbandoned(t *testing.T) {
	t.Parallel() // mostly waiting: see the package comment (main_test.go)
	began := time.Now()
	ns := shared.namespace(t)
	cm := e2eutil.HelloApp(ns)
	if err := shared.Client.Create(t.Context(), cm); err != nil {
		t.Fatal(err)
	}
	rs := e2eutil.HelloRayService(ns, "v1")
	rs.Spec.UpgradeStrategy.PendingClusterTimeoutSeconds = ptr.To[int32](pendingTimeout)
	if err := shared.Client.Create(t.Context(), rs); err != nil {
		t.Fatal(err)
	}
	rs = shared.waitRayService(t, ns, rayServiceReadyTimeout, "serving on one cluster", e2eutil.ServingOneCluster)
	blue := rs.Status.ActiveServiceStatus.RayClusterName
	t.Logf("RayService ready on %s after %v", blue, time.Since(began).Round(time.Second))
	serve := shared.serveService(t, ns, blue)
	url := fmt.Sprintf("http://%s%s", net.JoinHostPort(serve.Spec.ClusterIP, strconv.Itoa(e2eutil.HelloServePort)), e2eutil.HelloRoute)
	shared.waitAnswer(t, url, "v1")

	loop := e2eutil.StartRequestLoop(url)
	loopStarted := time.Now()
	replies := []e2eutil.Reply(nil)
	defer func() {
		if replies == nil {
			loop.Finish()
		}
	}()
	waitFor(t, "the loop's first answers", func() (bool, error) { return loop.Answered("v1") >= 10, nil })

	broken := e2eutil.HelloHeadPod("v2")
	broken.Containers[0].Image = unrunnableImage
	shared.setHeadPod(t, ns, broken)
	green := shared.waitPending(t, ns, "")
	seen := time.Now()
	shared.waitHeadWaiting(t, ns, green, "ErrImagePull")

	rs = shared.waitRayService(t, ns, time.Duration(pendingTimeout)*time.Second+time.Minute, "the upgrade abandoned", abandoned(green))
	abandonedAt := time.Now()
	t.Logf("upgrade to %s abandoned %v after the pending cluster was seen", green, abandonedAt.Sub(seen).Round(time.Second))
	checkAbandoned(t, rs, blue, green, seen)
	shared.checkPendingTimeoutEvent(t, ns, green, blue)
	shared.waitClusterGone(t, ns, green, time.Minute)
	shared.checkOnlyCluster(t, ns, blue)
	shared.serveService(t, ns, blue)
	t.Logf("pending cluster %s gone %v after the abandonment", green, time.Since(abandonedAt).Round(time.Second))

	shared.fixUpgrade(t, ns, "v2", fixedTimeout)
	fixed := time.Now()
	third := shared.waitPending(t, ns, green)
	rs = shared.waitRayService(t, ns, rayServiceUpgradeTimeout, "the new attempt promoted", func(rs *rayv1.RayService) error {
		if rs.Status.ActiveServiceStatus.RayClusterName != third {
			return fmt.Errorf("active %q, pending %q", rs.Status.ActiveServiceStatus.RayClusterName, rs.Status.PendingServiceStatus.RayClusterName)
		}
		return e2eutil.ServingOneCluster(rs)
	})
	t.Logf("new attempt %s took over %v after the fixing change", third, time.Since(fixed).Round(time.Second))
	if c := meta.FindStatusCondition(rs.Status.Conditions, string(rayv1.UpgradeAbandoned)); c != nil {
		t.Errorf("UpgradeAbandoned %+v after the upgrade went through, want it removed", c)
	}
	checkServing(t, rs, third)
	waitFor(t, "answers from "+third, func() (bool, error) { return loop.Answered("v2") >= 10, nil })
	replies = loop.Finish()
	e2eutil.CheckUpgradeReplies(t, replies, loopStarted, "v1", "v2")
	shared.waitClusterGone(t, ns, blue, time.Duration(e2eutil.HelloDeletionDelay)*time.Second+time.Minute)
	shared.checkOnlyCluster(t, ns, third)
	t.Logf("TestRayServiceUpgradeAbandoned: %v", time.Since(began).Round(time.Second))
}

// setHeadPod replaces the RayService's head Pod spec: a change of
// rayClusterConfig.
func (s *suite) setHeadPod(t *testing.T, ns string, spec corev1.PodSpec) {
	t.Helper()
	if _, err := e2eutil.SetHelloHeadPod(t.Context(), s.Client, ns, spec); err != nil {
		t.Fatalf("changing the head Pod spec: %v", err)
	}
}

// fixUpgrade sets the hello head Pod of version and the pending cluster
// deadline in one update.
func (s *suite) fixUpgrade(t *testing.T, ns, version string, timeout int32) {
	t.Helper()
	_, err := e2eutil.UpdateHello(t.Context(), s.Client, ns, func(rs *rayv1.RayService) {
		rs.Spec.RayClusterSpec.HeadGroupSpec.Template.Spec = e2eutil.HelloHeadPod(version)
		rs.Spec.UpgradeStrategy.PendingClusterTimeoutSeconds = ptr.To(timeout)
	})
	if err != nil {
		t.Fatalf("fixing the upgrade: %v", err)
	}
}

// waitPending waits until the RayService has a pending cluster other than
// previous and returns its name.
func (s *suite) waitPending(t *testing.T, ns, previous string) string {
	t.Helper()
	rs := s.waitRayService(t, ns, rayServiceUpgradeTimeout, "a pending cluster", func(rs *rayv1.RayService) error {
		if p := rs.Status.PendingServiceStatus.RayClusterName; p == "" || p == previous {
			return fmt.Errorf("pending cluster %q; conditions %v", p, rs.Status.Conditions)
		}
		return nil
	})
	return rs.Status.PendingServiceStatus.RayClusterName
}

// waitHeadWaiting waits until the cluster's head container waits with
// reason.
func (s *suite) waitHeadWaiting(t *testing.T, ns, cluster, reason string) {
	t.Helper()
	waitFor(t, fmt.Sprintf("the head of %s waiting with %s", cluster, reason), func() (bool, error) {
		pods, err := s.rayPods(t.Context(), ns, cluster, "head")
		if err != nil || len(pods) != 1 {
			return false, fmt.Errorf("%d head Pods (%v)", len(pods), err)
		}
		for _, cs := range pods[0].Status.ContainerStatuses {
			if cs.State.Waiting != nil && cs.State.Waiting.Reason == reason {
				return true, nil
			}
		}
		return false, fmt.Errorf("container statuses %+v", pods[0].Status.ContainerStatuses)
	})
}

// abandoned passes once the upgrade to pending was abandoned and the
// RayService serves from its active cluster alone.
func abandoned(pending string) func(*rayv1.RayService) error {
	return func(rs *rayv1.RayService) error {
		c := meta.FindStatusCondition(rs.Status.Conditions, string(rayv1.UpgradeAbandoned))
		if c == nil || c.Status != metav1.ConditionTrue || c.Reason != string(rayv1.PendingClusterTimeout) {
			return fmt.Errorf("UpgradeAbandoned is %+v", c)
		}
		if att := rs.Status.UpgradeAttempt; att == nil || att.AbandonedRayClusterName != pending {
			return fmt.Errorf("upgradeAttempt %+v", att)
		}
		return e2eutil.ServingOneCluster(rs)
	}
}

// checkAbandoned checks the status after the abandonment: the active
// cluster serves, the attempt records the abandoned cluster no sooner than
// the deadline after the test saw it pending.
func checkAbandoned(t *testing.T, rs *rayv1.RayService, active, pending string, seen time.Time) {
	t.Helper()
	checkServing(t, rs, active)
	att := rs.Status.UpgradeAttempt
	if att.AbandonedTime == nil || att.Abandoned != 1 || att.AbandonedClusterSpecHash == "" || att.NextAttemptTime != nil {
		t.Errorf("upgradeAttempt %+v, want one abandonment with its time and spec hash, no next attempt (no back-off)", att)
	}
	// The operator timed the attempt from when it first saw the cluster
	// pending, which is before the test did; times in status are seconds.
	if att.AbandonedTime != nil && att.AbandonedTime.Add(time.Second).Before(seen.Add(time.Duration(pendingTimeout)*time.Second-5*time.Second)) {
		t.Errorf("abandoned at %v, the pending cluster was seen at %v: sooner than the %ds deadline", att.AbandonedTime, seen, pendingTimeout)
	}
	c := meta.FindStatusCondition(rs.Status.Conditions, string(rayv1.UpgradeAbandoned))
	if !strings.Contains(c.Message, pending) || !strings.Contains(c.Message, active+" keeps serving") {
		t.Errorf("UpgradeAbandoned message %q, want it to name %s and %s", c.Message, pending, active)
	}
}

// checkPendingTimeoutEvent checks the Warning event PendingClusterTimeout
// of the RayService names both clusters.
func (s *suite) checkPendingTimeoutEvent(t *testing.T, ns, pending, active string) {
	t.Helper()
	waitFor(t, "the PendingClusterTimeout event", func() (bool, error) {
		events, err := s.Clientset.EventsV1().Events(ns).List(t.Context(), metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		for _, e := range events.Items {
			if e.Regarding.Kind == rayv1.KindRayService && e.Reason == string(rayv1.PendingClusterTimeout) {
				if e.Type != corev1.EventTypeWarning || !strings.Contains(e.Note, pending) || !strings.Contains(e.Note, active) {
					t.Errorf("event %s %s: %q, want a Warning naming %s and %s", e.Type, e.Reason, e.Note, pending, active)
				}
				return true, nil
			}
		}
		return false, fmt.Errorf("no PendingClusterTimeout event among %d", len(events.Items))
	})
}
