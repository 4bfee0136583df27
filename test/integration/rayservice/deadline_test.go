package rayservice_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// withUpgradeDeadline sets spec.upgradeStrategy's pending-cluster timeout
// and retry back-off (nil: unset).
func withUpgradeDeadline(timeout, backoff *int32) func(*rayv1.RayService) {
	return func(rs *rayv1.RayService) {
		if rs.Spec.UpgradeStrategy == nil {
			rs.Spec.UpgradeStrategy = &rayv1.RayServiceUpgradeStrategy{}
		}
		rs.Spec.UpgradeStrategy.PendingClusterTimeoutSeconds = timeout
		rs.Spec.UpgradeStrategy.PendingClusterRetryBackoffSeconds = backoff
	}
}

// passSeen makes the operator run a pass whose status write the test can
// see (a new serve endpoint count), so that what the pass did not do can
// be checked without sleeping.
func (w *world) passSeen(name string, endpoints int) *rayv1.RayService {
	w.t.Helper()
	w.publishEndpoints("svc-serve-svc", endpoints)
	return w.waitStatus(name, "a pass counting the endpoints", func(st *rayv1.RayServiceStatuses) bool {
		return st.NumServeEndpoints == int32(endpoints) //nolint:gosec // a small count
	})
}

// TestUpgradeDeadlineAbandonsPendingCluster (KubeRay #5088) upgrades a
// serving RayService with pendingClusterTimeoutSeconds 60 and
// pendingClusterRetryBackoffSeconds 30 to a cluster that never becomes
// ready. The attempt's start survives an operator restart; one second
// before the deadline the pending cluster is kept; after it the pending
// cluster is deleted, with the UpgradeAbandoned condition and a Warning
// event, while the active cluster and the serve Service stay as they were
// throughout. After the back-off a new pending cluster tries again; when
// it too is abandoned the back-off doubles; a spec change during the
// back-off starts a new attempt at once, which completes and clears the
// record.
func TestUpgradeDeadlineAbandonsPendingCluster(t *testing.T) {
	w := newWorld(t)
	w.serving(rayService("svc", withUpgradeDeadline(ptr.To[int32](60), ptr.To[int32](30))))
	serveIP := w.service("svc-serve-svc").Spec.ClusterIP
	history := w.statusHistory("svc")

	w.editSpec("svc", withImage("rayproject/ray:2.61.0"))
	w.waitCluster("svc-bbbbb")
	rs := w.waitStatus("svc", "svc-bbbbb timed", func(st *rayv1.RayServiceStatuses) bool {
		return st.UpgradeAttempt != nil && st.UpgradeAttempt.RayClusterName == "svc-bbbbb"
	})
	start := rs.Status.UpgradeAttempt.StartTime.Time
	if d := start.Sub(w.clock.Now()); d > time.Second || d < -time.Second {
		t.Errorf("attempt start %v, clock %v", start, w.clock.Now())
	}

	// A restart neither restarts nor forgets the attempt's clock.
	w.restart()
	w.clock.SetTime(start.Add(59 * time.Second))
	rs = w.passSeen("svc", 2)
	if rs.Status.PendingServiceStatus.RayClusterName != "svc-bbbbb" || w.cluster("svc-bbbbb") == nil {
		t.Fatalf("pending cluster abandoned before its deadline: %s", clusterNamesOf(&rs.Status))
	}
	if got := rs.Status.UpgradeAttempt.StartTime.Time; !got.Equal(start) {
		t.Errorf("attempt start moved across the restart: %v, was %v", got, start)
	}

	w.clock.SetTime(start.Add(61 * time.Second))
	abandonedAt := w.clock.Now()
	rs = w.waitCondition("svc", rayv1.UpgradeAbandoned, metav1.ConditionTrue, rayv1.PendingClusterTimeout)
	w.waitClusterGone("svc-bbbbb")
	msg := conditionFor(&rs.Status, rayv1.UpgradeAbandoned).Message
	for _, want := range []string{"Pending RayCluster svc-bbbbb did not take over within 1m0s", "RayCluster svc-aaaaa keeps serving", "tried again at"} {
		if !strings.Contains(msg, want) {
			t.Errorf("condition message %q lacks %q", msg, want)
		}
	}
	if ev := w.waitEvent("svc", "PendingClusterTimeout"); ev.Type != corev1.EventTypeWarning || ev.Note != msg {
		t.Errorf("event %s %q, want Warning %q", ev.Type, ev.Note, msg)
	}
	created := 0
	for _, e := range w.events("svc", "CreatedRayCluster") {
		if strings.HasSuffix(e.Note, "/svc-bbbbb") {
			created++
		}
	}
	if created != 1 {
		t.Errorf("svc-bbbbb created %d times, want once", created)
	}
	att := rs.Status.UpgradeAttempt
	if att.Abandoned != 1 || att.AbandonedRayClusterName != "svc-bbbbb" || att.AbandonedClusterSpecHash == "" || att.RayClusterName != "" {
		t.Errorf("upgradeAttempt %+v", att)
	}
	if want := abandonedAt.Add(30 * time.Second); att.NextAttemptTime == nil || !att.NextAttemptTime.Time.Equal(want.Truncate(time.Second)) {
		t.Errorf("nextAttemptTime %v, want %v", att.NextAttemptTime, want)
	}
	if s, r := conditionOf(&rs.Status, rayv1.UpgradeInProgress); s != metav1.ConditionFalse || r != string(rayv1.NoPendingCluster) {
		t.Errorf("UpgradeInProgress %s/%s", s, r)
	}
	if rs.Status.ActiveServiceStatus.RayClusterName != "svc-aaaaa" || rs.Status.PendingServiceStatus.RayClusterName != "" {
		t.Errorf("clusters in status: %s", clusterNamesOf(&rs.Status))
	}
	serve := w.service("svc-serve-svc")
	if serve.Spec.Selector[rayv1.LabelCluster] != "svc-aaaaa" || serve.Spec.ClusterIP != serveIP {
		t.Errorf("serve Service selector %v ClusterIP %s (was %s)", serve.Spec.Selector, serve.Spec.ClusterIP, serveIP)
	}
	if c := w.cluster("svc-aaaaa"); c == nil || c.Annotations[rayv1.AnnotationDeletionDeadline] != "" {
		t.Errorf("the active cluster is gone or has a deletion deadline: %v", c)
	}
	for i, st := range history() {
		if st.ActiveServiceStatus.RayClusterName != "svc-aaaaa" || !hasCondition(&st, rayv1.RayServiceReady, metav1.ConditionTrue, rayv1.NonZeroServeEndpoints) {
			t.Errorf("status %d during the upgrade: %s, Ready %v", i, clusterNamesOf(&st), conditionFor(&st, rayv1.RayServiceReady))
		}
	}

	// During the back-off the same spec is not tried again.
	w.clock.SetTime(abandonedAt.Add(29 * time.Second))
	rs = w.passSeen("svc", 3)
	if diff := cmp.Diff([]string{"svc-aaaaa"}, w.allClusters()); diff != "" || rs.Status.PendingServiceStatus.RayClusterName != "" {
		t.Fatalf("a new attempt during the back-off: pending %q, clusters (-want +got):\n%s", rs.Status.PendingServiceStatus.RayClusterName, diff)
	}

	// After it, a new pending cluster tries again.
	w.clock.SetTime(abandonedAt.Add(31 * time.Second))
	rs = w.waitCondition("svc", rayv1.UpgradeAbandoned, metav1.ConditionFalse, rayv1.UpgradeRetried)
	if p := rs.Status.PendingServiceStatus.RayClusterName; p != "svc-ccccc" {
		t.Fatalf("retry pending cluster %q, want svc-ccccc", p)
	}
	w.waitCluster("svc-ccccc")
	rs = w.waitStatus("svc", "svc-ccccc timed", func(st *rayv1.RayServiceStatuses) bool {
		return st.UpgradeAttempt.RayClusterName == "svc-ccccc"
	})
	retryStart := rs.Status.UpgradeAttempt.StartTime.Time

	// Abandoned again, the back-off doubles.
	w.clock.SetTime(retryStart.Add(61 * time.Second))
	second := w.clock.Now()
	rs = w.waitCondition("svc", rayv1.UpgradeAbandoned, metav1.ConditionTrue, rayv1.PendingClusterTimeout)
	w.waitClusterGone("svc-ccccc")
	att = rs.Status.UpgradeAttempt
	if want := second.Add(60 * time.Second).Truncate(time.Second); att.Abandoned != 2 || att.NextAttemptTime == nil || !att.NextAttemptTime.Time.Equal(want) {
		t.Errorf("second abandonment: %+v, want abandoned 2, next attempt %v", att, want)
	}

	// A spec change during the back-off starts a new attempt at once, and
	// its success clears the record.
	w.editSpec("svc", withImage("rayproject/ray:2.62.0"))
	w.waitStatus("svc", "svc-ddddd pending", func(st *rayv1.RayServiceStatuses) bool {
		return st.PendingServiceStatus.RayClusterName == "svc-ddddd"
	})
	w.waitCluster("svc-ddddd")
	w.bringUp("svc-ddddd")
	// The status that names the new active cluster already has no record.
	rs = w.waitStatus("svc", "svc-ddddd promoted", func(st *rayv1.RayServiceStatuses) bool {
		return st.ActiveServiceStatus.RayClusterName == "svc-ddddd"
	})
	if c := conditionFor(&rs.Status, rayv1.UpgradeAbandoned); c.Type != "" {
		t.Errorf("UpgradeAbandoned %+v once svc-ddddd is active, want it removed", c)
	}
	if att := rs.Status.UpgradeAttempt; att == nil || *att != (rayv1.UpgradeAttempt{}) {
		t.Errorf("upgradeAttempt after a completed upgrade: %+v", att)
	}
}

// TestUpgradeDeadlineUnsetKeepsPendingCluster is KubeRay's behaviour: with
// no pendingClusterTimeoutSeconds a pending cluster that never becomes
// ready is kept however long it takes, and nothing of the deadline shows
// in status.
func TestUpgradeDeadlineUnsetKeepsPendingCluster(t *testing.T) {
	w := newWorld(t)
	w.serving(rayService("svc"))
	w.editSpec("svc", withImage("rayproject/ray:2.61.0"))
	w.waitCluster("svc-bbbbb")

	w.clock.Step(24 * time.Hour)
	rs := w.passSeen("svc", 2)
	if rs.Status.PendingServiceStatus.RayClusterName != "svc-bbbbb" || w.cluster("svc-bbbbb") == nil {
		t.Errorf("pending cluster dropped without a deadline: %s", clusterNamesOf(&rs.Status))
	}
	if rs.Status.UpgradeAttempt != nil || conditionFor(&rs.Status, rayv1.UpgradeAbandoned).Type != "" {
		t.Errorf("deadline state without the field: %+v %v", rs.Status.UpgradeAttempt, conditionFor(&rs.Status, rayv1.UpgradeAbandoned))
	}
	if diff := cmp.Diff([]string{"svc-aaaaa", "svc-bbbbb"}, w.allClusters()); diff != "" {
		t.Errorf("clusters (-want +got):\n%s", diff)
	}
}

// TestUpgradeDeadlineIncremental abandons an incremental upgrade whose
// pending cluster never comes up: nothing had moved to it, so it is
// deleted after the deadline, the HTTPRoute sends everything to the active
// cluster and the active cluster's Serve capacity was never lowered.
func TestUpgradeDeadlineIncremental(t *testing.T) {
	w := newWorld(t)
	w.create(rayService("svc", incremental, withUpgradeDeadline(ptr.To[int32](60), nil)))
	w.waitCluster("svc-aaaaa")
	w.bringUp("svc-aaaaa")
	w.eventually("the HTTPRoute", func() (bool, error) {
		return cmp.Equal(w.weights("svc"), []string{"svc-aaaaa-serve-svc=100"}), nil
	})
	w.programGateway("svc")
	w.publishEndpoints("svc-aaaaa-serve-svc", 1)
	w.waitCondition("svc", rayv1.RayServiceReady, metav1.ConditionTrue, rayv1.NonZeroServeEndpoints)

	w.editSpec("svc", withImage("rayproject/ray:2.61.0"))
	w.waitCluster("svc-bbbbb")
	rs := w.waitStatus("svc", "svc-bbbbb timed", func(st *rayv1.RayServiceStatuses) bool {
		return st.UpgradeAttempt != nil && st.UpgradeAttempt.RayClusterName == "svc-bbbbb"
	})
	start := rs.Status.UpgradeAttempt.StartTime.Time

	w.clock.SetTime(start.Add(61 * time.Second))
	rs = w.waitCondition("svc", rayv1.UpgradeAbandoned, metav1.ConditionTrue, rayv1.PendingClusterTimeout)
	w.waitClusterGone("svc-bbbbb")
	if !strings.Contains(conditionFor(&rs.Status, rayv1.UpgradeAbandoned).Message, "a spec change starts a new attempt") {
		t.Errorf("message without a retry: %q", conditionFor(&rs.Status, rayv1.UpgradeAbandoned).Message)
	}
	if rs.Status.ActiveServiceStatus.RayClusterName != "svc-aaaaa" || rs.Status.PendingServiceStatus.RayClusterName != "" {
		t.Errorf("clusters in status: %s", clusterNamesOf(&rs.Status))
	}
	w.eventually("the route on the active cluster alone", func() (bool, error) {
		return cmp.Equal(w.weights("svc"), []string{"svc-aaaaa-serve-svc=100"}), nil
	})
	for _, c := range w.capacities("svc-aaaaa") {
		if c != 100 && c != -1 {
			t.Errorf("target_capacity PUT to the active cluster: %v", w.capacities("svc-aaaaa"))
			break
		}
	}
	if s, _ := conditionOf(&rs.Status, rayv1.RayServiceReady); s != metav1.ConditionTrue {
		t.Errorf("Ready %s after abandoning", s)
	}
	// Without a back-off the same spec is not retried; the next pass shows it.
	w.publishEndpoints("svc-aaaaa-serve-svc", 2)
	rs = w.waitStatus("svc", "the second endpoint counted", func(st *rayv1.RayServiceStatuses) bool { return st.NumServeEndpoints == 2 })
	if rs.Status.PendingServiceStatus.RayClusterName != "" || w.cluster("svc-ccccc") != nil {
		t.Errorf("the abandoned spec was retried without a back-off: %s", clusterNamesOf(&rs.Status))
	}
}
