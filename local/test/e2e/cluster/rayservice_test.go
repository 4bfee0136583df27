package cluster_test

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/local/internal/e2eutil"
)

// Bounds of the phases of the upgrade test, on a 2-core machine: a head
// starts in about 15 s, Serve deploys in seconds more; the second cluster
// starts while the first one runs.
const (
	rayServiceReadyTimeout   = 4 * time.Minute
	rayServiceUpgradeTimeout = 4 * time.Minute
)

// TestRayServiceZeroDowntimeUpgrade: a RayService serves a real Ray Serve
// application through its serve Service; a change of rayClusterConfig
// brings up a second cluster, switches the serve Service to it once the
// application runs there and deletes the first, while a request loop
// against the serve Service's ClusterIP sees no failed request.
func TestRayServiceZeroDowntimeUpgrade(t *testing.T) {
	t.Parallel() // mostly waiting: see the package comment (main_test.go)
	began := time.Now()
	ns := shared.namespace(t)
	cm := e2eutil.HelloApp(ns)
	if err := shared.Client.Create(t.Context(), cm); err != nil {
		t.Fatal(err)
	}
	if err := shared.Client.Create(t.Context(), e2eutil.HelloRayService(ns, "v1")); err != nil {
		t.Fatal(err)
	}

	rs := shared.waitRayService(t, ns, rayServiceReadyTimeout, "serving on one cluster", e2eutil.ServingOneCluster)
	t.Logf("RayService ready after %v", time.Since(began).Round(time.Second))
	blue := rs.Status.ActiveServiceStatus.RayClusterName
	checkServing(t, rs, blue)
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
	waitFor(t, fmt.Sprintf("the loop's first answers from %s", blue), func() (bool, error) {
		return loop.Answered("v1") >= 10, nil
	})

	shared.setAppVersion(t, ns, "v2")
	upgradeBegan := time.Now()
	rs = shared.waitRayService(t, ns, rayServiceUpgradeTimeout, "a pending cluster", func(rs *rayv1.RayService) error {
		if rs.Status.PendingServiceStatus.RayClusterName == "" {
			return fmt.Errorf("no pending cluster yet; conditions %v", rs.Status.Conditions)
		}
		return nil
	})
	checkUpgrading(t, rs, blue)
	shared.serveService(t, ns, blue)
	green := rs.Status.PendingServiceStatus.RayClusterName

	rs = shared.waitRayService(t, ns, rayServiceUpgradeTimeout, "the pending cluster promoted", func(rs *rayv1.RayService) error {
		if rs.Status.ActiveServiceStatus.RayClusterName != green || rs.Status.PendingServiceStatus.RayClusterName != "" {
			return fmt.Errorf("active %q, pending %q", rs.Status.ActiveServiceStatus.RayClusterName, rs.Status.PendingServiceStatus.RayClusterName)
		}
		return e2eutil.ServingOneCluster(rs)
	})
	switched := time.Now()
	t.Logf("switched to %s %v after the spec change", green, switched.Sub(upgradeBegan).Round(time.Second))
	checkServing(t, rs, green)
	if got := shared.serveService(t, ns, green); got.Spec.ClusterIP != serve.Spec.ClusterIP {
		t.Errorf("the serve Service's ClusterIP changed from %s to %s", serve.Spec.ClusterIP, got.Spec.ClusterIP)
	}

	shared.waitClusterGone(t, ns, blue, time.Duration(e2eutil.HelloDeletionDelay)*time.Second+2*time.Minute)
	t.Logf("old cluster %s and its Pods gone %v after the switch", blue, time.Since(switched).Round(time.Second))
	waitFor(t, fmt.Sprintf("answers from %s after %s is gone", green, blue), func() (bool, error) {
		return loop.Answered("v2") >= 10, nil
	})
	replies = loop.Finish()
	e2eutil.CheckUpgradeReplies(t, replies, loopStarted, "v1", "v2")
	shared.checkOnlyCluster(t, ns, green)
	t.Logf("TestRayServiceZeroDowntimeUpgrade: %v until the old cluster was gone", time.Since(began).Round(time.Second))
}

// checkServing fails t unless the application and its deployment run on
// cluster, the active one, and the serve Service has one endpoint.
func checkServing(t *testing.T, rs *rayv1.RayService, cluster string) {
	t.Helper()
	if err := e2eutil.HelloServedBy(rs, cluster); err != nil {
		t.Error(err)
	}
}

// checkUpgrading checks the status in the middle of a blue/green upgrade:
// the old cluster still serves, the new one is pending.
func checkUpgrading(t *testing.T, rs *rayv1.RayService, active string) {
	t.Helper()
	st := &rs.Status
	upgrading := meta.FindStatusCondition(st.Conditions, string(rayv1.UpgradeInProgress))
	if upgrading == nil || upgrading.Status != metav1.ConditionTrue || upgrading.Reason != string(rayv1.BothActivePendingClustersExist) {
		t.Errorf("UpgradeInProgress is %v during the upgrade, want True/%s", upgrading, rayv1.BothActivePendingClustersExist)
	}
	if !meta.IsStatusConditionTrue(st.Conditions, string(rayv1.RayServiceReady)) || st.ServiceStatus != rayv1.Running {
		t.Errorf("Ready %v, serviceStatus %q during the upgrade: the old cluster still serves", meta.FindStatusCondition(st.Conditions, string(rayv1.RayServiceReady)), st.ServiceStatus)
	}
	if st.ActiveServiceStatus.RayClusterName != active || st.PendingServiceStatus.RayClusterName == active {
		t.Errorf("active %q, pending %q during the upgrade, want active %q and a new pending cluster",
			st.ActiveServiceStatus.RayClusterName, st.PendingServiceStatus.RayClusterName, active)
	}
}

// waitRayService waits until check passes on the RayService and returns it.
func (s *suite) waitRayService(t *testing.T, ns string, timeout time.Duration, what string, check func(*rayv1.RayService) error) *rayv1.RayService {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), timeout)
	defer cancel()
	rs := &rayv1.RayService{}
	err := poll(ctx, func() (bool, error) {
		if err := s.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: e2eutil.HelloName}, rs); err != nil {
			return false, err
		}
		err := check(rs)
		return err == nil, err
	})
	if err != nil {
		t.Fatalf("RayService %s: waiting for %s: %v", e2eutil.HelloName, what, err)
	}
	return rs
}

// serveService returns the RayService's serve Service and checks that it
// selects cluster's serving Pods.
func (s *suite) serveService(t *testing.T, ns, cluster string) *corev1.Service {
	t.Helper()
	svc := &corev1.Service{}
	if err := s.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: e2eutil.HelloName + "-serve-svc"}, svc); err != nil {
		t.Fatal(err)
	}
	if got := svc.Spec.Selector[rayv1.LabelCluster]; got != cluster || svc.Spec.Selector[rayv1.LabelServe] != "true" {
		t.Errorf("serve Service %s selects %v, want cluster %s's Pods with %s=true", svc.Name, svc.Spec.Selector, cluster, rayv1.LabelServe)
	}
	return svc
}

// waitAnswer waits until url answers want: the Ready condition counts
// endpoints, which kube-proxy turns into rules a moment later.
func (s *suite) waitAnswer(t *testing.T, url, want string) {
	t.Helper()
	probe := e2eutil.StartRequestLoop(url)
	defer probe.Finish()
	waitFor(t, fmt.Sprintf("%s to answer %q", url, want), func() (bool, error) {
		return probe.Answered(want) > 0, nil
	})
}

// setAppVersion changes APP_VERSION in the RayService's head template: a
// change of rayClusterConfig.
func (s *suite) setAppVersion(t *testing.T, ns, version string) {
	t.Helper()
	s.setHeadPod(t, ns, e2eutil.HelloHeadPod(version))
}

// waitClusterGone waits until the RayCluster and its Pods are gone.
func (s *suite) waitClusterGone(t *testing.T, ns, name string, timeout time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), timeout)
	defer cancel()
	if err := poll(ctx, func() (bool, error) { return e2eutil.ClusterGone(ctx, s.Client, ns, name) }); err != nil {
		t.Fatalf("RayCluster %s is not gone: %v", name, err)
	}
}

// checkOnlyCluster checks that name is the namespace's only RayCluster.
func (s *suite) checkOnlyCluster(t *testing.T, ns, name string) {
	t.Helper()
	list := &rayv1.RayClusterList{}
	if err := s.Client.List(t.Context(), list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 || list.Items[0].Name != name {
		names := []string{}
		for _, c := range list.Items {
			names = append(names, c.Name)
		}
		t.Errorf("RayClusters %v, want only %s", names, name)
	}
}

// waitFor polls cond for at most a minute: for signals that follow quickly
// from what the test already waited for.
func waitFor(t *testing.T, what string, cond func() (bool, error)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if err := poll(ctx, cond); err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}
