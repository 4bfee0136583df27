package rayservice_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/dashboard/dashboardtest"
)

// TestUnhealthyServeProxy makes the Serve proxy of the serving head fail:
// the head's ray.io/serve label goes "false", so the serve Service no
// longer selects it, its endpoints drop to none and Ready goes False with
// reason ZeroServeEndpoints; ServeRequestsFailing and a Warning event say
// that the proxy failed; nothing else changes. When the proxy answers
// again (and its back-off has passed), all of it comes back.
func TestUnhealthyServeProxy(t *testing.T) {
	w := newWorld(t)
	w.serving(rayService("svc"))

	w.setProxyHealthy("svc-aaaaa-head", false)
	w.eventually("the head Pod out of serving", func() (bool, error) {
		return podLabel(w, "svc-aaaaa-head", rayv1.LabelServe) == "false", nil
	})
	if eps := w.syncEndpoints("svc-serve-svc"); len(eps) != 0 {
		t.Fatalf("the serve Service still selects %d Pods", len(eps))
	}
	rs := w.waitCondition("svc", rayv1.RayServiceReady, metav1.ConditionFalse, rayv1.ZeroServeEndpoints)
	if ready := conditionFor(&rs.Status, rayv1.RayServiceReady); ready.Message != "Number of serve endpoints dropped to 0" {
		t.Errorf("Ready message %q", ready.Message)
	}
	if rs.Status.NumServeEndpoints != 0 || rs.Status.ServiceStatus != rayv1.NotRunning {
		t.Errorf("endpoints %d, serviceStatus %q", rs.Status.NumServeEndpoints, rs.Status.ServiceStatus)
	}
	if rs.Status.ActiveServiceStatus.RayClusterName != "svc-aaaaa" || rs.Status.PendingServiceStatus.RayClusterName != "" {
		t.Errorf("clusters in status: %s", clusterNamesOf(&rs.Status))
	}

	failing := conditionFor(&rs.Status, rayv1.ServeRequestsFailing)
	if failing.Status != metav1.ConditionTrue || failing.Reason != string(rayv1.FailedServeProxyHealthCheck) ||
		!strings.HasPrefix(failing.Message, "The Serve proxy of the head Pod "+w.ns+"/svc-aaaaa-head of RayCluster svc-aaaaa failed its health check: ") {
		t.Errorf("ServeRequestsFailing %+v", failing)
	}
	w.waitEvent("svc", string(rayv1.FailedServeProxyHealthCheck))

	// The proxy answers again; it is checked again once the back-off (on
	// the operator's clock) has passed.
	w.setProxyHealthy("svc-aaaaa-head", true)
	w.clock.Step(time.Minute)
	w.eventually("the head Pod back in serving", func() (bool, error) {
		return podLabel(w, "svc-aaaaa-head", rayv1.LabelServe) == "true", nil
	})
	w.syncEndpoints("svc-serve-svc")
	rs = w.waitCondition("svc", rayv1.RayServiceReady, metav1.ConditionTrue, rayv1.NonZeroServeEndpoints)
	if rs.Status.ServiceStatus != rayv1.Running {
		t.Errorf("serviceStatus %q", rs.Status.ServiceStatus)
	}
	w.waitCondition("svc", rayv1.ServeRequestsFailing, metav1.ConditionFalse, rayv1.ServeRequestsSucceeded)
	if diff := cmp.Diff([]string{"svc-aaaaa"}, w.allClusters()); diff != "" {
		t.Errorf("clusters (-want +got):\n%s", diff)
	}
}

// TestMissingHeadPod deletes the serving head Pod: while it is missing
// the status is still written (KubeRay stops every pass at "found 0 head"
// and freezes the status), so Ready goes False when the endpoints drop;
// the replacement head is labelled for serving and Ready comes back.
func TestMissingHeadPod(t *testing.T) {
	w := newWorld(t)
	w.serving(rayService("svc"))

	head := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "svc-aaaaa-head", Namespace: w.ns}}
	if err := w.c.Delete(context.Background(), head); err != nil {
		t.Fatal(err)
	}
	if eps := w.syncEndpoints("svc-serve-svc"); len(eps) != 0 {
		t.Fatalf("%d endpoints without a head", len(eps))
	}
	rs := w.waitCondition("svc", rayv1.RayServiceReady, metav1.ConditionFalse, rayv1.ZeroServeEndpoints)
	if rs.Status.NumServeEndpoints != 0 || rs.Status.ActiveServiceStatus.RayClusterName != "svc-aaaaa" {
		t.Errorf("endpoints %d, %s", rs.Status.NumServeEndpoints, clusterNamesOf(&rs.Status))
	}

	w.newHeadPod("svc-aaaaa", "svc-aaaaa-head-2")
	w.eventually("the new head Pod labelled for serving", func() (bool, error) {
		return podLabel(w, "svc-aaaaa-head-2", rayv1.LabelServe) == "true", nil
	})
	if eps := w.syncEndpoints("svc-serve-svc"); len(eps) != 1 || eps[0].TargetRef.Name != "svc-aaaaa-head-2" {
		t.Fatalf("endpoints %v, want the new head", eps)
	}
	w.waitCondition("svc", rayv1.RayServiceReady, metav1.ConditionTrue, rayv1.NonZeroServeEndpoints)
	if diff := cmp.Diff([]string{"svc-aaaaa"}, w.allClusters()); diff != "" {
		t.Errorf("clusters (-want +got):\n%s", diff)
	}
	if svc := w.service("svc-head-svc"); svc.Spec.Selector[rayv1.LabelCluster] != "svc-aaaaa" {
		t.Errorf("head Service selector %v", svc.Spec.Selector)
	}
}

// TestExcludeHeadPodFromServeService keeps the head out of the serve
// Service (excludeHeadPodFromServeSvc): its label stays "false" though its
// proxy is healthy, and only workers serve.
func TestExcludeHeadPodFromServeService(t *testing.T) {
	w := newWorld(t)
	w.create(rayService("svc", func(rs *rayv1.RayService) { rs.Spec.ExcludeHeadPodFromServeSvc = true }))
	w.waitCluster("svc-aaaaa")
	w.bringUp("svc-aaaaa")
	w.waitStatus("svc", "promotion", func(st *rayv1.RayServiceStatuses) bool {
		return st.ActiveServiceStatus.RayClusterName == "svc-aaaaa"
	})
	// The pass that promoted the cluster had set the label first.
	if got := podLabel(w, "svc-aaaaa-head", rayv1.LabelServe); got != "false" {
		t.Errorf("head serve label %q, want false", got)
	}
	if eps := w.syncEndpoints("svc-serve-svc"); len(eps) != 0 {
		t.Errorf("the serve Service selects %d Pods, want none", len(eps))
	}

	worker := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "svc-aaaaa-small-1", Labels: map[string]string{
			rayv1.LabelCluster: "svc-aaaaa", rayv1.LabelNodeType: string(rayv1.WorkerNode), rayv1.LabelServe: "true",
		}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "ray-worker", Image: "rayproject/ray:2.60.0"}}},
	}
	w.create(worker)
	w.markRunningReady(worker)
	if eps := w.syncEndpoints("svc-serve-svc"); len(eps) != 1 || eps[0].TargetRef.Name != worker.Name {
		t.Fatalf("endpoints %v, want the worker", eps)
	}
	w.waitCondition("svc", rayv1.RayServiceReady, metav1.ConditionTrue, rayv1.NonZeroServeEndpoints)
	if got := podLabel(w, "svc-aaaaa-head", rayv1.LabelServe); got != "false" {
		t.Errorf("head serve label %q, want false", got)
	}
}

// TestUnhealthyApplicationOnActiveCluster turns a running application
// UNHEALTHY, then DEPLOY_FAILED: the status shows it; Ready follows the
// endpoints only (as KubeRay), so it stays True; no new cluster.
func TestUnhealthyApplicationOnActiveCluster(t *testing.T) {
	w := newWorld(t)
	w.serving(rayService("svc"))

	for _, status := range []string{rayv1.ApplicationStatusUnhealthy, rayv1.ApplicationStatusDeployFailed, rayv1.ApplicationStatusRunning} {
		w.setAppStatus("svc-aaaaa", "app", status)
		rs := w.waitStatus("svc", "application "+status, func(st *rayv1.RayServiceStatuses) bool {
			return st.ActiveServiceStatus.Applications["app"].Status == status
		})
		if !hasCondition(&rs.Status, rayv1.RayServiceReady, metav1.ConditionTrue, rayv1.NonZeroServeEndpoints) {
			t.Errorf("%s: Ready %v", status, rs.Status.Conditions)
		}
		if rs.Status.PendingServiceStatus.RayClusterName != "" {
			t.Errorf("%s: a cluster was named: %s", status, clusterNamesOf(&rs.Status))
		}
	}
	if diff := cmp.Diff([]string{"svc-aaaaa"}, w.allClusters()); diff != "" {
		t.Errorf("clusters (-want +got):\n%s", diff)
	}
	if n := len(w.configsOn("svc-aaaaa")); n != 1 {
		t.Errorf("%d serve configs on svc-aaaaa, want 1 (a failed application is not re-applied)", n)
	}
}

// TestFailedDeployIsNotPromoted upgrades to a cluster whose application
// fails to deploy: the pending status shows DEPLOY_FAILED, the Services
// keep selecting the old cluster and it stays active; once the
// application runs, the switch happens.
func TestFailedDeployIsNotPromoted(t *testing.T) {
	w := newWorld(t)
	w.serving(rayService("svc"))
	w.serve.SetInitialStatus(rayv1.ApplicationStatusDeployFailed)
	w.editSpec("svc", withImage("rayproject/ray:2.61.0"))
	w.waitCluster("svc-bbbbb")
	w.bringUp("svc-bbbbb")

	rs := w.waitStatus("svc", "the pending application failed", func(st *rayv1.RayServiceStatuses) bool {
		return st.PendingServiceStatus.Applications["app"].Status == rayv1.ApplicationStatusDeployFailed
	})
	// The pass that read DEPLOY_FAILED decided the Services and promotion.
	if a, p := rs.Status.ActiveServiceStatus.RayClusterName, rs.Status.PendingServiceStatus.RayClusterName; a != "svc-aaaaa" || p != "svc-bbbbb" {
		t.Errorf("clusters in status: %s", clusterNamesOf(&rs.Status))
	}
	if !hasCondition(&rs.Status, rayv1.UpgradeInProgress, metav1.ConditionTrue, rayv1.BothActivePendingClustersExist) {
		t.Errorf("UpgradeInProgress: %v", rs.Status.Conditions)
	}
	for _, svc := range []string{"svc-head-svc", "svc-serve-svc"} {
		if got := w.service(svc).Spec.Selector[rayv1.LabelCluster]; got != "svc-aaaaa" {
			t.Errorf("%s selects %q during a failed deploy", svc, got)
		}
	}

	w.setAppStatus("svc-bbbbb", "app", rayv1.ApplicationStatusRunning)
	w.waitStatus("svc", "promotion of svc-bbbbb", func(st *rayv1.RayServiceStatuses) bool {
		return st.ActiveServiceStatus.RayClusterName == "svc-bbbbb" && st.PendingServiceStatus.RayClusterName == ""
	})
	if got := w.service("svc-serve-svc").Spec.Selector[rayv1.LabelCluster]; got != "svc-bbbbb" {
		t.Errorf("serve Service selects %q after the application runs", got)
	}
}

// TestFailedFirstDeploy creates a RayService whose application fails to
// deploy on its first cluster: the cluster is not promoted and no Service
// is created until the application runs.
func TestFailedFirstDeploy(t *testing.T) {
	w := newWorld(t)
	w.serve.SetInitialStatus(rayv1.ApplicationStatusDeployFailed)
	w.create(rayService("svc"))
	w.waitCluster("svc-aaaaa")
	w.bringUp("svc-aaaaa")

	rs := w.waitStatus("svc", "the application failed", func(st *rayv1.RayServiceStatuses) bool {
		return st.PendingServiceStatus.Applications["app"].Status == rayv1.ApplicationStatusDeployFailed
	})
	if rs.Status.ActiveServiceStatus.RayClusterName != "" {
		t.Errorf("promoted with a failed application: %s", clusterNamesOf(&rs.Status))
	}
	if !hasCondition(&rs.Status, rayv1.RayServiceReady, metav1.ConditionFalse, rayv1.RayServiceInitializing) {
		t.Errorf("Ready: %v", rs.Status.Conditions)
	}
	if w.service("svc-head-svc") != nil || w.service("svc-serve-svc") != nil {
		t.Error("Services created for a cluster whose application failed")
	}

	w.setAppStatus("svc-aaaaa", "app", rayv1.ApplicationStatusRunning)
	w.waitStatus("svc", "promotion", func(st *rayv1.RayServiceStatuses) bool {
		return st.ActiveServiceStatus.RayClusterName == "svc-aaaaa"
	})
	if w.service("svc-serve-svc") == nil {
		t.Error("no serve Service after the application runs")
	}
}

// TestOldHeadFailsDuringUpgrade makes the serving head's proxy fail while
// the pending cluster's applications still deploy (KubeRay's
// TestOldHeadPodFailDuringUpgrade): Ready goes False (ZeroServeEndpoints)
// with UpgradeInProgress True; once the new applications run, the Services
// move and Ready comes back.
func TestOldHeadFailsDuringUpgrade(t *testing.T) {
	w := newWorld(t)
	w.serving(rayService("svc"))
	w.serve.SetInitialStatus(rayv1.ApplicationStatusDeploying)
	w.editSpec("svc", withImage("rayproject/ray:2.61.0"))
	w.waitCluster("svc-bbbbb")
	w.bringUp("svc-bbbbb")
	w.waitConfigs("svc-bbbbb", 1)

	w.setProxyHealthy("svc-aaaaa-head", false)
	w.eventually("the old head out of serving", func() (bool, error) {
		return podLabel(w, "svc-aaaaa-head", rayv1.LabelServe) == "false", nil
	})
	w.syncEndpoints("svc-serve-svc")
	rs := w.waitCondition("svc", rayv1.RayServiceReady, metav1.ConditionFalse, rayv1.ZeroServeEndpoints)
	if !hasCondition(&rs.Status, rayv1.UpgradeInProgress, metav1.ConditionTrue, rayv1.BothActivePendingClustersExist) {
		t.Errorf("UpgradeInProgress: %v", rs.Status.Conditions)
	}

	w.setAppStatus("svc-bbbbb", "app", rayv1.ApplicationStatusRunning)
	w.waitStatus("svc", "promotion of svc-bbbbb", func(st *rayv1.RayServiceStatuses) bool {
		return st.ActiveServiceStatus.RayClusterName == "svc-bbbbb"
	})
	w.eventually("the new head serving", func() (bool, error) {
		return podLabel(w, "svc-bbbbb-head", rayv1.LabelServe) == "true", nil
	})
	if eps := w.syncEndpoints("svc-serve-svc"); len(eps) != 1 || eps[0].TargetRef.Name != "svc-bbbbb-head" {
		t.Fatalf("endpoints %v, want the new head", eps)
	}
	w.waitCondition("svc", rayv1.RayServiceReady, metav1.ConditionTrue, rayv1.NonZeroServeEndpoints)
}

// TestCustomServeService names the serve Service (spec.serveService): the
// RayService's endpoints are counted from that Service, and suspending
// deletes it with the rest.
func TestCustomServeService(t *testing.T) {
	w := newWorld(t)
	w.serving(rayService("svc", func(rs *rayv1.RayService) {
		rs.Spec.ServeService = &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "my-serve"}}
	}))
	svc := w.service("my-serve")
	if svc.Spec.Selector[rayv1.LabelCluster] != "svc-aaaaa" || metav1.GetControllerOf(svc) == nil {
		t.Errorf("my-serve: selector %v, owners %v", svc.Spec.Selector, svc.OwnerReferences)
	}
	if w.service("svc-serve-svc") != nil {
		t.Error("the default serve Service was created too")
	}

	w.editSpec("svc", func(rs *rayv1.RayService) { rs.Spec.Suspend = true })
	w.waitCondition("svc", rayv1.RayServiceSuspended, metav1.ConditionTrue, rayv1.SuspendComplete)
	if w.service("my-serve") != nil {
		t.Error("my-serve left after suspending")
	}
}

// TestServeLostItsApplications drops every application of the serving
// cluster, as a head restarted without GCS fault tolerance does: the same
// config is PUT again and the applications run again (KubeRay #1420).
func TestServeLostItsApplications(t *testing.T) {
	w := newWorld(t)
	w.serving(rayService("svc"))
	w.serve.ForgetApps(dashboardtest.URLFor("svc-aaaaa", w.ns))

	configs := w.waitConfigs("svc-aaaaa", 2)
	if string(configs[1]) != string(configs[0]) {
		t.Errorf("a different config was PUT again:\n%s\nwas\n%s", configs[1], configs[0])
	}
	rs := w.waitStatus("svc", "the application back", func(st *rayv1.RayServiceStatuses) bool {
		return st.ActiveServiceStatus.Applications["app"].Status == rayv1.ApplicationStatusRunning
	})
	if rs.Status.PendingServiceStatus.RayClusterName != "" {
		t.Errorf("a cluster was named: %s", clusterNamesOf(&rs.Status))
	}
}

// TestServicesRepaired points the head and serve Services at a cluster
// that is not the RayService's (as an interrupted switch or a stray edit
// may leave them): KubeRay panics on such Services; here the next pass
// points them back at the active cluster, keeping their ClusterIPs.
func TestServicesRepaired(t *testing.T) {
	w := newWorld(t)
	w.serving(rayService("svc"))
	serveIP := w.service("svc-serve-svc").Spec.ClusterIP

	for _, name := range []string{"svc-head-svc", "svc-serve-svc"} {
		svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: w.ns}}
		w.update(svc, false, func() { svc.Spec.Selector[rayv1.LabelCluster] = "svc-zzzzz" })
	}
	for _, name := range []string{"svc-head-svc", "svc-serve-svc"} {
		w.eventually(name+" back on svc-aaaaa", func() (bool, error) {
			return w.service(name).Spec.Selector[rayv1.LabelCluster] == "svc-aaaaa", nil
		})
	}
	if got := w.service("svc-serve-svc").Spec.ClusterIP; got != serveIP {
		t.Errorf("serve ClusterIP %s, was %s", got, serveIP)
	}
	rs := w.rs("svc")
	if rs.Status.ActiveServiceStatus.RayClusterName != "svc-aaaaa" || rs.Status.PendingServiceStatus.RayClusterName != "" {
		t.Errorf("clusters in status: %s", clusterNamesOf(&rs.Status))
	}
	if diff := cmp.Diff([]string{"svc-aaaaa"}, w.allClusters()); diff != "" {
		t.Errorf("clusters (-want +got):\n%s", diff)
	}
}
