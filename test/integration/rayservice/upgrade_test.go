package rayservice_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/buildinfo"
	"github.com/ray-operator/ray-operator/internal/clusterowner"
	"github.com/ray-operator/ray-operator/internal/serveapps"
)

// appNames are the applications of a serve config as PUT (JSON).
func appNames(t *testing.T, config []byte) []string {
	t.Helper()
	var body struct {
		Applications []struct {
			Name string `json:"name"`
		} `json:"applications"`
	}
	if err := json.Unmarshal(config, &body); err != nil {
		t.Fatal(err)
	}
	names := make([]string, 0, len(body.Applications))
	for _, a := range body.Applications {
		names = append(names, a.Name)
	}
	return names
}

// TestServeConfigUpdateInPlace changes only serveConfigV2 of a serving
// RayService: the new config goes to the active cluster's Serve, no new
// cluster is prepared, and the status shows the new application.
func TestServeConfigUpdateInPlace(t *testing.T) {
	w := newWorld(t)
	rs := w.serving(rayService("svc"))
	ip := w.service("svc-serve-svc").Spec.ClusterIP

	w.editSpec("svc", func(rs *rayv1.RayService) { rs.Spec.ServeConfigV2 += secondApp })
	configs := w.waitConfigs("svc-aaaaa", 2)
	if diff := cmp.Diff([]string{"app", "second"}, appNames(t, configs[1])); diff != "" {
		t.Errorf("applications PUT on svc-aaaaa (-want +got):\n%s", diff)
	}
	got := w.waitStatus("svc", "both applications shown", func(st *rayv1.RayServiceStatuses) bool {
		return len(st.ActiveServiceStatus.Applications) == 2
	})
	if got.Status.ObservedGeneration != rs.Generation+1 {
		t.Errorf("observedGeneration %d, want %d", got.Status.ObservedGeneration, rs.Generation+1)
	}
	for _, app := range []string{"app", "second"} {
		if s := got.Status.ActiveServiceStatus.Applications[app].Status; s != rayv1.ApplicationStatusRunning {
			t.Errorf("application %s: %q, want RUNNING", app, s)
		}
	}
	if got.Status.PendingServiceStatus.RayClusterName != "" {
		t.Errorf("a pending cluster was named: %q", got.Status.PendingServiceStatus.RayClusterName)
	}
	if diff := cmp.Diff([]string{"svc-aaaaa"}, w.allClusters()); diff != "" {
		t.Errorf("clusters (-want +got):\n%s", diff)
	}
	if s, r := conditionOf(&got.Status, rayv1.RayServiceReady); s != metav1.ConditionTrue {
		t.Errorf("Ready = %s/%s, want True", s, r)
	}
	if rec := w.cluster("svc-aaaaa").Annotations[rayv1.AnnotationAppliedServeConfig]; !serveapps.Recorded(rec, rs.Spec.ServeConfigV2+secondApp) {
		t.Errorf("applied config recorded on svc-aaaaa: %q", rec)
	}
	if got := w.service("svc-serve-svc").Spec.ClusterIP; got != ip {
		t.Errorf("serve ClusterIP %s, was %s", got, ip)
	}
	if len(w.events("svc", "UpdatedServeApplications")) == 0 {
		t.Error("no UpdatedServeApplications event")
	}
}

// TestBlueGreenUpgrade changes the cluster spec (the image) and the serve
// config of a serving RayService: a pending cluster comes up next to the
// active one and gets the new config (the active one does not: KubeRay
// #3423), the Services move to it keeping their ClusterIP, it is
// promoted, and the old cluster is deleted only once its deletion deadline,
// rayClusterDeletionDelaySeconds after the switch on the operator's clock,
// has passed.
func TestBlueGreenUpgrade(t *testing.T) {
	w := newWorld(t)
	w.serving(rayService("svc"))
	headIP, serveIP := w.service("svc-head-svc").Spec.ClusterIP, w.service("svc-serve-svc").Spec.ClusterIP

	w.editSpec("svc", func(rs *rayv1.RayService) {
		withImage("rayproject/ray:2.61.0")(rs)
		rs.Spec.ServeConfigV2 += secondApp
	})
	rs := w.waitCondition("svc", rayv1.UpgradeInProgress, metav1.ConditionTrue, rayv1.BothActivePendingClustersExist)
	if a, p := rs.Status.ActiveServiceStatus.RayClusterName, rs.Status.PendingServiceStatus.RayClusterName; a != "svc-aaaaa" || p != "svc-bbbbb" {
		t.Fatalf("clusters in status: active %q pending %q", a, p)
	}
	if s, _ := conditionOf(&rs.Status, rayv1.RayServiceReady); s != metav1.ConditionTrue {
		t.Errorf("Ready during the upgrade = %s, want True (the old cluster still serves)", s)
	}
	if apps := rs.Status.ActiveServiceStatus.Applications; len(apps) != 0 {
		t.Errorf("the active cluster's applications shown during the upgrade: %v", apps)
	}
	pending := w.waitCluster("svc-bbbbb")
	if got := headImage(pending); got != "rayproject/ray:2.61.0" {
		t.Errorf("pending cluster image %q", got)
	}

	w.bringUp("svc-bbbbb")
	configs := w.waitConfigs("svc-bbbbb", 1)
	if diff := cmp.Diff([]string{"app", "second"}, appNames(t, configs[0])); diff != "" {
		t.Errorf("applications PUT on svc-bbbbb (-want +got):\n%s", diff)
	}
	rs = w.waitStatus("svc", "promotion of svc-bbbbb", func(st *rayv1.RayServiceStatuses) bool {
		return st.ActiveServiceStatus.RayClusterName == "svc-bbbbb" && st.PendingServiceStatus.RayClusterName == ""
	})
	switchedAt := w.clock.Now()
	if n := len(w.configsOn("svc-aaaaa")); n != 1 {
		t.Errorf("svc-aaaaa got %d configs, want only its first", n)
	}
	if s, r := conditionOf(&rs.Status, rayv1.UpgradeInProgress); s != metav1.ConditionFalse || r != string(rayv1.NoPendingCluster) {
		t.Errorf("UpgradeInProgress = %s/%s, want False/NoPendingCluster", s, r)
	}
	if len(rs.Status.ActiveServiceStatus.Applications) != 2 {
		t.Errorf("active applications %v", rs.Status.ActiveServiceStatus.Applications)
	}
	head, serve := w.service("svc-head-svc"), w.service("svc-serve-svc")
	if head.Spec.Selector[rayv1.LabelCluster] != "svc-bbbbb" || serve.Spec.Selector[rayv1.LabelCluster] != "svc-bbbbb" {
		t.Errorf("selectors: head %v serve %v", head.Spec.Selector, serve.Spec.Selector)
	}
	if head.Spec.ClusterIP != headIP || serve.Spec.ClusterIP != serveIP {
		t.Errorf("ClusterIPs head %s serve %s, were %s %s", head.Spec.ClusterIP, serve.Spec.ClusterIP, headIP, serveIP)
	}

	// The old cluster gets its deadline, on the operator's clock.
	deadline := w.deadlineOf("svc-aaaaa")
	if want := switchedAt.Add(60 * time.Second); deadline.Before(want.Add(-time.Second)) || deadline.After(want) {
		t.Errorf("deletion deadline %v, want %v (60 s after the switch)", deadline, want)
	}

	// One second before it, a pass (the one that counts a new endpoint)
	// still leaves the cluster alone.
	w.clock.SetTime(deadline.Add(-time.Second))
	w.publishEndpoints("svc-serve-svc", 2)
	w.waitStatus("svc", "the second endpoint counted", func(st *rayv1.RayServiceStatuses) bool { return st.NumServeEndpoints == 2 })
	if c := w.cluster("svc-aaaaa"); c == nil || !c.DeletionTimestamp.IsZero() {
		t.Fatal("svc-aaaaa deleted before its deadline")
	}

	w.clock.SetTime(deadline.Add(time.Second))
	w.waitClusterGone("svc-aaaaa")
	w.waitEvent("svc", "DeletedRayCluster")
	if diff := cmp.Diff([]string{"svc-bbbbb"}, w.allClusters()); diff != "" {
		t.Errorf("clusters (-want +got):\n%s", diff)
	}
	if got := w.warnings("svc"); len(got) != 0 {
		t.Errorf("Warning events in a smooth upgrade: %q", got)
	}
}

// TestAppendedWorkerGroupUpdatesInPlace appends a worker group to a
// serving RayService: the active cluster takes it in place (hash and
// worker-group count updated), no new cluster is prepared, and Serve is
// not touched.
func TestAppendedWorkerGroupUpdatesInPlace(t *testing.T) {
	w := newWorld(t)
	w.serving(rayService("svc"))
	before := w.cluster("svc-aaaaa")

	gen := w.editSpec("svc", func(rs *rayv1.RayService) {
		g := rs.Spec.RayClusterSpec.WorkerGroupSpecs[0].DeepCopy()
		g.GroupName, g.Replicas = "large", ptr.To[int32](2)
		rs.Spec.RayClusterSpec.WorkerGroupSpecs = append(rs.Spec.RayClusterSpec.WorkerGroupSpecs, *g)
	})
	var after *rayv1.RayCluster
	w.eventually("svc-aaaaa updated in place", func() (bool, error) {
		after = w.cluster("svc-aaaaa")
		return len(after.Spec.WorkerGroupSpecs) == 2, nil
	})
	rs := w.waitObserved("svc")
	if rs.Status.ObservedGeneration != gen || rs.Status.PendingServiceStatus.RayClusterName != "" {
		t.Errorf("status after the pass: generation %d/%d, pending %q", rs.Status.ObservedGeneration, gen, rs.Status.PendingServiceStatus.RayClusterName)
	}
	if diff := cmp.Diff([]string{"svc-aaaaa"}, w.allClusters()); diff != "" {
		t.Errorf("clusters (-want +got):\n%s", diff)
	}
	if after.UID != before.UID {
		t.Error("svc-aaaaa was recreated, not updated")
	}
	if after.Annotations[rayv1.LabelNumWorkerGroups] != "2" || after.Annotations[rayv1.LabelHashWithoutReplicas] == before.Annotations[rayv1.LabelHashWithoutReplicas] {
		t.Errorf("annotations after the update: %v", after.Annotations)
	}
	if got := after.Spec.WorkerGroupSpecs[1]; got.GroupName != "large" || ptr.Deref(got.Replicas, 0) != 2 {
		t.Errorf("appended group %s with %v replicas", got.GroupName, got.Replicas)
	}
	if n := len(w.configsOn("svc-aaaaa")); n != 1 {
		t.Errorf("%d serve configs on svc-aaaaa, want 1", n)
	}
	w.waitEvent("svc", "UpdatedRayCluster")
}

// TestAutoscalerFieldsKeepTheCluster runs an autoscaled RayService: the
// autoscaler's fields of the spec (replicas, minReplicas, maxReplicas,
// workersToDelete) changing prepares no new cluster and does not touch the
// cluster; a later in-place update (an appended group) keeps the replicas
// the autoscaler chose for the existing group.
func TestAutoscalerFieldsKeepTheCluster(t *testing.T) {
	w := newWorld(t)
	w.serving(rayService("svc", func(rs *rayv1.RayService) {
		rs.Spec.RayClusterSpec.EnableInTreeAutoscaling = ptr.To(true)
	}))
	// The autoscaler scales the group to 3.
	w.editCluster("svc-aaaaa", func(c *rayv1.RayCluster) { c.Spec.WorkerGroupSpecs[0].Replicas = ptr.To[int32](3) })
	before := w.cluster("svc-aaaaa")

	gen := w.editSpec("svc", func(rs *rayv1.RayService) {
		g := &rs.Spec.RayClusterSpec.WorkerGroupSpecs[0]
		g.Replicas, g.MinReplicas, g.MaxReplicas = ptr.To[int32](2), ptr.To[int32](1), ptr.To[int32](5)
		g.ScaleStrategy.WorkersToDelete = []string{"svc-aaaaa-small-xyz"}
	})
	rs := w.waitObserved("svc")
	if rs.Status.ObservedGeneration != gen || rs.Status.PendingServiceStatus.RayClusterName != "" {
		t.Errorf("status after the pass: generation %d/%d, pending %q", rs.Status.ObservedGeneration, gen, rs.Status.PendingServiceStatus.RayClusterName)
	}
	if diff := cmp.Diff([]string{"svc-aaaaa"}, w.allClusters()); diff != "" {
		t.Errorf("clusters (-want +got):\n%s", diff)
	}
	if after := w.cluster("svc-aaaaa"); after.ResourceVersion != before.ResourceVersion {
		t.Errorf("svc-aaaaa was written:\n%s", cmp.Diff(before.Spec, after.Spec))
	}

	w.editSpec("svc", func(rs *rayv1.RayService) {
		g := rs.Spec.RayClusterSpec.WorkerGroupSpecs[0].DeepCopy()
		g.GroupName, g.ScaleStrategy.WorkersToDelete = "large", nil
		rs.Spec.RayClusterSpec.WorkerGroupSpecs = append(rs.Spec.RayClusterSpec.WorkerGroupSpecs, *g)
	})
	var after *rayv1.RayCluster
	w.eventually("svc-aaaaa updated in place", func() (bool, error) {
		after = w.cluster("svc-aaaaa")
		return len(after.Spec.WorkerGroupSpecs) == 2, nil
	})
	small := after.Spec.WorkerGroupSpecs[0]
	if ptr.Deref(small.Replicas, 0) != 3 {
		t.Errorf("replicas of the existing group %v, want the autoscaler's 3", small.Replicas)
	}
	if ptr.Deref(small.MinReplicas, 0) != 1 || ptr.Deref(small.MaxReplicas, 0) != 5 {
		t.Errorf("bounds of the existing group %v..%v, want the spec's 1..5", small.MinReplicas, small.MaxReplicas)
	}
	if got := after.Spec.WorkerGroupSpecs[1].Replicas; ptr.Deref(got, 0) != 2 {
		t.Errorf("replicas of the appended group %v, want the spec's 2", got)
	}
	if diff := cmp.Diff([]string{"svc-aaaaa"}, w.allClusters()); diff != "" {
		t.Errorf("clusters (-want +got):\n%s", diff)
	}
}

// TestUpgradeStrategyNone changes the cluster spec and the serve config of
// a serving RayService whose upgrade type is None: no new cluster, the
// active cluster keeps its spec, and the config is applied to it in place.
func TestUpgradeStrategyNone(t *testing.T) {
	w := newWorld(t)
	w.serving(rayService("svc", func(rs *rayv1.RayService) {
		rs.Spec.UpgradeStrategy = &rayv1.RayServiceUpgradeStrategy{Type: ptr.To(rayv1.RayServiceUpgradeNone)}
	}))
	before := w.cluster("svc-aaaaa")

	gen := w.editSpec("svc", func(rs *rayv1.RayService) {
		withImage("rayproject/ray:2.61.0")(rs)
		rs.Spec.ServeConfigV2 += secondApp
	})
	configs := w.waitConfigs("svc-aaaaa", 2)
	if diff := cmp.Diff([]string{"app", "second"}, appNames(t, configs[1])); diff != "" {
		t.Errorf("applications PUT on svc-aaaaa (-want +got):\n%s", diff)
	}
	rs := w.waitObserved("svc")
	if rs.Status.ObservedGeneration != gen || rs.Status.PendingServiceStatus.RayClusterName != "" {
		t.Errorf("status: generation %d/%d, pending %q", rs.Status.ObservedGeneration, gen, rs.Status.PendingServiceStatus.RayClusterName)
	}
	if s, r := conditionOf(&rs.Status, rayv1.UpgradeInProgress); s != metav1.ConditionFalse || r != string(rayv1.NoPendingCluster) {
		t.Errorf("UpgradeInProgress = %s/%s, want False/NoPendingCluster", s, r)
	}
	if diff := cmp.Diff([]string{"svc-aaaaa"}, w.allClusters()); diff != "" {
		t.Errorf("clusters (-want +got):\n%s", diff)
	}
	after := w.cluster("svc-aaaaa")
	if headImage(after) != headImage(before) || after.Annotations[rayv1.LabelHashWithoutReplicas] != before.Annotations[rayv1.LabelHashWithoutReplicas] {
		t.Errorf("svc-aaaaa changed: image %s, hash %s", headImage(after), after.Annotations[rayv1.LabelHashWithoutReplicas])
	}
}

// TestHandoverFromAnotherOperatorVersion stops the operator, makes the
// active cluster look made by another operator (KubeRay v1.5.1: its own
// version, a hash this operator would not compute, no record of the
// applied config) and changes the image meanwhile, as a handover or an
// operator upgrade does. The new operator updates that cluster in place
// and takes it over; it prepares no new cluster and the Services stay.
func TestHandoverFromAnotherOperatorVersion(t *testing.T) {
	w := newWorld(t)
	w.serving(rayService("svc"))
	before := w.cluster("svc-aaaaa")
	serveIP := w.service("svc-serve-svc").Spec.ClusterIP

	w.stop()
	w.editCluster("svc-aaaaa", func(c *rayv1.RayCluster) {
		c.Annotations[rayv1.LabelKubeRayVersion] = "v1.5.1"
		c.Annotations[rayv1.LabelHashWithoutReplicas] = "KUBERAYHASH0000000000000000000000"
		delete(c.Annotations, rayv1.AnnotationAppliedServeConfig)
	})
	gen := w.editSpec("svc", withImage("rayproject/ray:2.61.0"))
	w.start()

	var after *rayv1.RayCluster
	w.eventually("svc-aaaaa taken over", func() (bool, error) {
		after = w.cluster("svc-aaaaa")
		return after.Annotations[rayv1.LabelKubeRayVersion] == buildinfo.Version(), nil
	})
	rs := w.waitObserved("svc")
	if rs.Status.ObservedGeneration != gen || rs.Status.PendingServiceStatus.RayClusterName != "" || rs.Status.ActiveServiceStatus.RayClusterName != "svc-aaaaa" {
		t.Errorf("status: generation %d/%d, %s", rs.Status.ObservedGeneration, gen, clusterNamesOf(&rs.Status))
	}
	if diff := cmp.Diff([]string{"svc-aaaaa"}, w.allClusters()); diff != "" {
		t.Errorf("clusters (-want +got):\n%s", diff)
	}
	if after.UID != before.UID {
		t.Error("svc-aaaaa was recreated")
	}
	if got := headImage(after); got != "rayproject/ray:2.61.0" {
		t.Errorf("image after the takeover %q, want the spec's", got)
	}
	if want, _ := clusterowner.SpecHash(&rs.Spec.RayClusterSpec); after.Annotations[rayv1.LabelHashWithoutReplicas] != want {
		t.Errorf("hash after the takeover %s, want %s (this operator's, of the current spec)", after.Annotations[rayv1.LabelHashWithoutReplicas], want)
	}
	if svc := w.service("svc-serve-svc"); svc.Spec.ClusterIP != serveIP || svc.Spec.Selector[rayv1.LabelCluster] != "svc-aaaaa" {
		t.Errorf("serve Service: ClusterIP %s (was %s), selector %v", svc.Spec.ClusterIP, serveIP, svc.Spec.Selector)
	}
	if s, _ := conditionOf(&rs.Status, rayv1.RayServiceReady); s != metav1.ConditionTrue {
		t.Errorf("Ready = %s, want True", s)
	}
	w.waitEvent("svc", "UpdatedRayCluster")
}

// TestSpecChangeDuringUpgradeReplacesPendingCluster changes the cluster
// spec again while a pending cluster comes up, back to the active
// cluster's spec: blue/green has no rollback, so (as in KubeRay) yet
// another pending cluster is prepared with that spec, the abandoned one is
// deleted after the deletion delay, and the new one is promoted.
func TestSpecChangeDuringUpgradeReplacesPendingCluster(t *testing.T) {
	w := newWorld(t)
	w.serving(rayService("svc"))
	w.editSpec("svc", withImage("rayproject/ray:2.61.0"))
	w.waitCluster("svc-bbbbb")

	w.editSpec("svc", withImage("rayproject/ray:2.60.0"))
	rs := w.waitStatus("svc", "svc-ccccc pending", func(st *rayv1.RayServiceStatuses) bool {
		return st.PendingServiceStatus.RayClusterName == "svc-ccccc"
	})
	if rs.Status.ActiveServiceStatus.RayClusterName != "svc-aaaaa" {
		t.Errorf("clusters in status: %s", clusterNamesOf(&rs.Status))
	}
	if got := headImage(w.waitCluster("svc-ccccc")); got != "rayproject/ray:2.60.0" {
		t.Errorf("image of svc-ccccc %q", got)
	}
	abandoned := w.deadlineOf("svc-bbbbb")
	if c := w.cluster("svc-aaaaa"); c.Annotations[rayv1.AnnotationDeletionDeadline] != "" {
		t.Errorf("the active cluster got a deletion deadline %s", c.Annotations[rayv1.AnnotationDeletionDeadline])
	}

	w.bringUp("svc-ccccc")
	w.waitStatus("svc", "promotion of svc-ccccc", func(st *rayv1.RayServiceStatuses) bool {
		return st.ActiveServiceStatus.RayClusterName == "svc-ccccc" && st.PendingServiceStatus.RayClusterName == ""
	})
	if n := len(w.configsOn("svc-bbbbb")); n != 0 {
		t.Errorf("%d serve configs on the abandoned cluster", n)
	}
	// The clock has not moved: both old clusters have the same deadline.
	if old := w.deadlineOf("svc-aaaaa"); !old.Equal(abandoned) {
		t.Errorf("deadlines: svc-aaaaa %v, svc-bbbbb %v", old, abandoned)
	}
	w.clock.SetTime(abandoned.Add(time.Second))
	w.waitClusterGone("svc-bbbbb")
	w.waitClusterGone("svc-aaaaa")
	if diff := cmp.Diff([]string{"svc-ccccc"}, w.allClusters()); diff != "" {
		t.Errorf("clusters (-want +got):\n%s", diff)
	}
}

// TestActiveClusterDeleted deletes the serving cluster under a Ready
// RayService: a new cluster is prepared, and once its applications run
// the Services move to it.
func TestActiveClusterDeleted(t *testing.T) {
	w := newWorld(t)
	w.serving(rayService("svc"))
	if err := w.c.Delete(t.Context(), w.cluster("svc-aaaaa")); err != nil {
		t.Fatal(err)
	}
	w.waitCluster("svc-bbbbb")
	w.bringUp("svc-bbbbb")
	rs := w.waitStatus("svc", "promotion of svc-bbbbb", func(st *rayv1.RayServiceStatuses) bool {
		return st.ActiveServiceStatus.RayClusterName == "svc-bbbbb" && st.PendingServiceStatus.RayClusterName == ""
	})
	if got := rs.Status.ActiveServiceStatus.Applications["app"].Status; got != rayv1.ApplicationStatusRunning {
		t.Errorf("application %q", got)
	}
	for _, svc := range []string{"svc-head-svc", "svc-serve-svc"} {
		if got := w.service(svc).Spec.Selector[rayv1.LabelCluster]; got != "svc-bbbbb" {
			t.Errorf("%s selects %q", svc, got)
		}
	}
	if diff := cmp.Diff([]string{"svc-bbbbb"}, w.allClusters()); diff != "" {
		t.Errorf("clusters (-want +got):\n%s", diff)
	}
}

// TestSchedulerFieldsKeepTheCluster changes what schedulers and Kueue own
// in the cluster spec (rayClusterConfig.suspend, tolerations, scheduling
// gates): no new cluster and no update; the cluster keeps the suspend it
// was created with, which Kueue has changed meanwhile.
func TestSchedulerFieldsKeepTheCluster(t *testing.T) {
	w := newWorld(t)
	w.serving(rayService("svc", func(rs *rayv1.RayService) { rs.Spec.RayClusterSpec.Suspend = ptr.To(false) }))
	// Kueue suspends the cluster, as it may.
	w.editCluster("svc-aaaaa", func(c *rayv1.RayCluster) { c.Spec.Suspend = ptr.To(true) })
	before := w.cluster("svc-aaaaa")

	gen := w.editSpec("svc", func(rs *rayv1.RayService) {
		spec := &rs.Spec.RayClusterSpec
		spec.Suspend = nil
		toleration := corev1.Toleration{Key: "gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}
		spec.HeadGroupSpec.Template.Spec.Tolerations = []corev1.Toleration{toleration}
		spec.WorkerGroupSpecs[0].Template.Spec.Tolerations = []corev1.Toleration{toleration}
		spec.WorkerGroupSpecs[0].Template.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: "example.com/gate"}}
	})
	rs := w.waitObserved("svc")
	if rs.Status.ObservedGeneration != gen || rs.Status.PendingServiceStatus.RayClusterName != "" {
		t.Errorf("status: generation %d/%d, pending %q", rs.Status.ObservedGeneration, gen, rs.Status.PendingServiceStatus.RayClusterName)
	}
	if diff := cmp.Diff([]string{"svc-aaaaa"}, w.allClusters()); diff != "" {
		t.Errorf("clusters (-want +got):\n%s", diff)
	}
	after := w.cluster("svc-aaaaa")
	if after.ResourceVersion != before.ResourceVersion {
		t.Errorf("svc-aaaaa was written:\n%s", cmp.Diff(before.Spec, after.Spec))
	}
	if !ptr.Deref(after.Spec.Suspend, false) {
		t.Error("the cluster's suspend, Kueue's, was overwritten")
	}
}

// TestMaximumLengthName runs a RayService with the longest name allowed
// (47 characters): its cluster is "<name>-aaaaa", its Services get
// KubeRay's names clipped to their last 50 characters, and it serves.
func TestMaximumLengthName(t *testing.T) {
	w := newWorld(t)
	name := strings.Repeat("a", 46) + "z"
	w.serving(rayService(name))
	head, serve := strings.Repeat("a", 40)+"z-head-svc", strings.Repeat("a", 39)+"z-serve-svc"
	for _, svc := range []string{head, serve} {
		if got := w.service(svc); got == nil || got.Spec.Selector[rayv1.LabelCluster] != name+"-aaaaa" {
			t.Errorf("Service %s: %v", svc, got)
		}
	}
	if diff := cmp.Diff([]string{name + "-aaaaa"}, w.allClusters()); diff != "" {
		t.Errorf("clusters (-want +got):\n%s", diff)
	}
}
