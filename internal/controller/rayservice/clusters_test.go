package rayservice

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/clusterowner"
	"github.com/ray-operator/ray-operator/internal/features"
	"github.com/ray-operator/ray-operator/internal/serveapps"
	"github.com/ray-operator/ray-operator/internal/testing/wrappers"
)

// newVersion is a cluster spec that differs from the default one in what
// matters (the Ray version and images), so it needs a new cluster.
func newVersion() *rayv1.RayClusterSpec {
	return wrappers.MakeRayClusterSpec().WorkerGroup("small", 1, 0, 3).RayVersion("2.61.0").Obj()
}

// appended is the default cluster spec with a worker group added at the end.
func appended() *rayv1.RayClusterSpec {
	return wrappers.MakeRayClusterSpec().WorkerGroup("small", 1, 0, 3).WorkerGroup("extra", 1, 0, 2).Obj()
}

// TestUpgradeDecision is the matrix of whether a changed cluster spec
// brings up a new cluster (KubeRay's TestIsZeroDowntimeUpgradeEnabled):
// spec.upgradeStrategy.type (unset, NewCluster, None,
// NewClusterWithIncrementalUpgrade) × the RayServiceIncrementalUpgrade
// gate × ENABLE_ZERO_DOWNTIME. A set type wins over the environment; the
// incremental type needs the gate.
func TestUpgradeDecision(t *testing.T) {
	types := map[string]*rayv1.RayServiceUpgradeType{
		"unset":       nil,
		"NewCluster":  ptr.To(rayv1.RayServiceNewCluster),
		"None":        ptr.To(rayv1.RayServiceUpgradeNone),
		"Incremental": ptr.To(rayv1.RayServiceNewClusterWithIncrementalUpgrade),
	}
	// want[type][gate][zeroDowntime]
	want := map[string]map[bool]map[bool]bool{
		"unset":       {false: {false: false, true: true}, true: {false: false, true: true}},
		"NewCluster":  {false: {false: true, true: true}, true: {false: true, true: true}},
		"None":        {false: {false: false, true: false}, true: {false: false, true: false}},
		"Incremental": {false: {false: false, true: false}, true: {false: true, true: true}},
	}
	for typeName, upgradeType := range types {
		for _, gate := range []bool{false, true} {
			for _, zeroDowntime := range []bool{false, true} {
				t.Run(fmt.Sprintf("type=%s/gate=%t/ENABLE_ZERO_DOWNTIME=%t", typeName, gate, zeroDowntime), func(t *testing.T) {
					w := rayService().ClusterSpec(newVersion())
					if upgradeType != nil {
						w.UpgradeType(*upgradeType)
					}
					rs := serving(w).Obj()
					e := newEnv(t, nil, withGate(features.RayServiceIncrementalUpgrade, gate),
						withOptions(func(o *Options) { o.ZeroDowntime = zeroDowntime }))
					s := newScope(rs, t0)
					s.active = clusterOf(t, rayService().Obj(), active).Obj()
					s.servingCluster = active
					if got := e.r.shouldPrepareNewCluster(s); got != want[typeName][gate][zeroDowntime] {
						t.Errorf("shouldPrepareNewCluster = %t, want %t", got, want[typeName][gate][zeroDowntime])
					}
				})
			}
		}
	}
}

// TestShouldPrepareNewCluster covers when a pass names a new pending
// cluster (KubeRay's TestShouldPrepareNewCluster_*), with new clusters
// enabled.
func TestShouldPrepareNewCluster(t *testing.T) {
	base := rayService().Obj()
	changed := rayService().ClusterSpec(newVersion()).Obj()
	cases := map[string]struct {
		rs              *rayv1.RayService
		active, pending *rayv1.RayCluster
		serving         string
		want            bool
	}{
		"no cluster at all": {
			rs: rayService().Obj(), want: true,
		},
		"active matches the spec": {
			rs: serving(rayService()).Obj(), active: clusterOf(t, base, active).Obj(), serving: active,
		},
		"active differs from the spec": {
			rs: serving(rayService().ClusterSpec(newVersion())).Obj(), active: clusterOf(t, base, active).Obj(), serving: active, want: true,
		},
		"only worker groups appended: updated in place instead": {
			rs: serving(rayService().ClusterSpec(appended())).Obj(), active: clusterOf(t, base, active).Obj(), serving: active,
		},
		"only replicas changed (the autoscaler's)": {
			rs:     serving(rayService().ClusterSpec(wrappers.MakeRayClusterSpec().WorkerGroup("small", 7, 1, 9).Obj())).Obj(),
			active: clusterOf(t, base, active).Obj(), serving: active,
		},
		"only serveConfigV2 changed": {
			rs: serving(rayService().ServeConfig("applications: []\n")).Obj(), active: clusterOf(t, base, active).Obj(), serving: active,
		},
		"pending matches the spec: not replaced": {
			rs:     serving(rayService().ClusterSpec(newVersion())).PendingCluster(pending).Obj(),
			active: clusterOf(t, base, active).Obj(), pending: clusterOf(t, changed, pending).Obj(), serving: active,
		},
		"pending differs from the spec: replaced by another": {
			rs:     serving(rayService()).PendingCluster(pending).Obj(),
			active: clusterOf(t, base, active).Obj(), pending: clusterOf(t, changed, pending).Obj(), serving: active, want: true,
		},
		"pending already serves: never replaced": {
			rs:     serving(rayService()).PendingCluster(pending).Obj(),
			active: clusterOf(t, base, active).Obj(), pending: clusterOf(t, changed, pending).Obj(), serving: pending,
		},
		"rollback in progress": {
			rs: serving(rayService().ClusterSpec(newVersion())).
				Condition(rayv1.RollbackInProgress, metav1.ConditionTrue, rayv1.DesiredClusterSpecChanged, "", t0).Obj(),
			active: clusterOf(t, base, active).Obj(), serving: active,
		},
		"the active cluster is gone and none is pending": {
			rs: serving(rayService()).Obj(), serving: active, want: true,
		},
		"the pending cluster is named but not created yet": {
			rs: serving(rayService()).PendingCluster(pending).Obj(), active: clusterOf(t, base, active).Obj(), serving: active,
		},
		"the pending cluster is named but not created, and there is no active cluster": {
			rs: initializing(rayService(), t0).PendingCluster(newCluster).Obj(),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, nil)
			s := newScope(tc.rs, t0)
			s.active, s.pending, s.servingCluster = tc.active, tc.pending, tc.serving
			if got := e.r.shouldPrepareNewCluster(s); got != tc.want {
				t.Errorf("shouldPrepareNewCluster = %t, want %t", got, tc.want)
			}
		})
	}
}

// TestConstructRayClusterForRayService checks the cluster a RayService asks
// for: its labels and annotations plus the origin labels, the spec hash,
// the number of worker groups and the operator version, a copy of the
// spec, and the RayService as controller.
func TestConstructRayClusterForRayService(t *testing.T) {
	rs := rayService().Label("team", "a").Annotation("note", "x").ClusterSpec(appended()).Obj()
	e := newEnv(t, nil, withOptions(func(o *Options) { o.OperatorVersion = "v9.9.9" }))
	got, err := e.r.desiredCluster(newScope(rs, t0), newCluster)
	if err != nil {
		t.Fatal(err)
	}
	hash, err := clusterowner.SpecHash(&rs.Spec.RayClusterSpec)
	if err != nil {
		t.Fatal(err)
	}
	want := &rayv1.RayCluster{
		ObjectMeta: metav1.ObjectMeta{
			Name: newCluster, Namespace: testNS,
			Labels: map[string]string{"team": "a", rayv1.LabelOriginatedFromCRName: testName, rayv1.LabelOriginatedFromCRD: rayv1.KindRayService},
			Annotations: map[string]string{"note": "x", rayv1.LabelHashWithoutReplicas: hash,
				rayv1.LabelNumWorkerGroups: "2", rayv1.LabelKubeRayVersion: "v9.9.9"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "ray.io/v1", Kind: rayv1.KindRayService, Name: testName,
				UID: rs.UID, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}},
		},
		Spec: rs.Spec.RayClusterSpec,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("cluster (-want +got):\n%s", diff)
	}
	got.Spec.WorkerGroupSpecs[0].GroupName = "changed"
	if rs.Spec.RayClusterSpec.WorkerGroupSpecs[0].GroupName != "small" {
		t.Error("the cluster shares its spec with the RayService")
	}
}

// TestReconcileRayCluster covers the clusters step through whole passes:
// creating the pending cluster (KubeRay's
// TestReconcileRayCluster_CreatePendingCluster) and updating the active or
// pending cluster in place (..._UpdateActiveCluster,
// ..._UpdatePendingCluster) when only worker groups were appended or the
// active cluster was made by another operator version.
func TestReconcileRayCluster(t *testing.T) {
	old := func(name string) *wrappers.RayClusterWrapper {
		return servingCluster(t, rayService().Obj(), name)
	}
	upgrading := func(w *wrappers.RayServiceWrapper) *wrappers.RayServiceWrapper {
		return noActiveApps(serving(w)).PendingCluster(pending).
			Condition(rayv1.UpgradeInProgress, metav1.ConditionTrue, rayv1.BothActivePendingClustersExist, msgBothClusters, t0)
	}
	runPasses(t, map[string]passCase{
		"creates the named pending cluster": {
			objs:           []client.Object{initializing(rayService(), t0).PendingCluster(newCluster).Obj()},
			wantResult:     ctrl.Result{RequeueAfter: DefaultInFlightRequeue},
			wantStatus:     &initializing(rayService(), t0).PendingCluster(newCluster).Obj().Status,
			wantFinalizers: []string{rayv1.RayServiceFinalizer},
			wantClusters:   []clusterState{{Name: newCluster, Version: testOperatorVersion, Workers: []string{"small"}}},
			wantEvents:     []string{"Normal CreatedRayCluster Created RayCluster ns/svc-abcde"},
		},
		"the active cluster of another operator version takes the spec in place, even a changed one": {
			objs: replace(idleWorld(t, serving(rayService().ClusterSpec(newVersion())).Obj()),
				old(active).Annotation(rayv1.LabelKubeRayVersion, "v1.4.2").Obj()),
			setup:          func(e *testEnv) { e.serveRunning(active) },
			wantResult:     ctrl.Result{RequeueAfter: DefaultIdleRequeue},
			wantStatus:     &serving(rayService().ClusterSpec(newVersion())).Obj().Status,
			wantFinalizers: []string{rayv1.RayServiceFinalizer},
			wantClusters:   []clusterState{{Name: active, AppliedConfig: appliedConfig, Version: testOperatorVersion, Workers: []string{"small"}}},
			wantServices:   idleServices(),
			wantEvents:     []string{"Normal UpdatedRayCluster Updated RayCluster ns/svc-active"},
		},
		"a worker group appended goes to the active cluster in place": {
			objs:           replace(idleWorld(t, serving(rayService().ClusterSpec(appended())).Obj()), old(active).Obj()),
			setup:          func(e *testEnv) { e.serveRunning(active) },
			wantResult:     ctrl.Result{RequeueAfter: DefaultIdleRequeue},
			wantStatus:     &serving(rayService().ClusterSpec(appended())).Obj().Status,
			wantFinalizers: []string{rayv1.RayServiceFinalizer},
			wantClusters:   []clusterState{{Name: active, AppliedConfig: appliedConfig, Version: testOperatorVersion, Workers: []string{"small", "extra"}}},
			wantServices:   idleServices(),
			wantEvents:     []string{"Normal UpdatedRayCluster Updated RayCluster ns/svc-active"},
		},
		"a worker group appended during an upgrade goes to the pending cluster only": {
			objs: append(replace(idleWorld(t, upgrading(rayService().ClusterSpec(appended())).Obj()), old(active).Obj()),
				clusterOf(t, rayService().Obj(), pending).Obj()),
			wantResult:     ctrl.Result{RequeueAfter: DefaultInFlightRequeue},
			wantStatus:     &upgrading(rayService().ClusterSpec(appended())).Obj().Status,
			wantFinalizers: []string{rayv1.RayServiceFinalizer},
			wantClusters: []clusterState{
				{Name: active, AppliedConfig: appliedConfig, Version: testOperatorVersion, Workers: []string{"small"}},
				{Name: pending, Version: testOperatorVersion, Workers: []string{"small", "extra"}},
			},
			wantServices: idleServices(),
			wantEvents:   []string{"Normal UpdatedRayCluster Updated RayCluster ns/svc-pending"},
		},
	})
}

// idleServices are the Services of idleWorld.
func idleServices() []serviceState {
	return []serviceState{{Name: headSvc, Cluster: active, ClusterIP: "10.96.0.1"}, {Name: serveSvc, Cluster: active, ClusterIP: "10.96.0.2"}}
}

// replace returns objs with the objects of the same kind and name as
// those of with replaced.
func replace(objs []client.Object, with ...client.Object) []client.Object {
	out := make([]client.Object, 0, len(objs))
	for _, o := range objs {
		for _, w := range with {
			if fmt.Sprintf("%T", o) == fmt.Sprintf("%T", w) && o.GetName() == w.GetName() {
				o = w
			}
		}
		out = append(out, o)
	}
	return out
}

// TestUpdateClusterKeepsWhatIsNotTheRayServices checks that an in-place
// update keeps spec.suspend (Kueue's once the cluster exists), the
// replicas of existing groups when the autoscaler owns them, and the
// operator's own annotations (the applied serve config and a deletion
// deadline).
func TestUpdateClusterKeepsWhatIsNotTheRayServices(t *testing.T) {
	spec := wrappers.MakeRayClusterSpec().WorkerGroup("small", 1, 0, 3).WorkerGroup("extra", 2, 0, 2).Autoscaling().Suspend(false).Obj()
	rs := serving(rayService().ClusterSpec(spec)).Obj()
	oldSpec := wrappers.MakeRayClusterSpec().WorkerGroup("small", 5, 0, 9).Autoscaling().Suspend(true).Obj()
	current := servingCluster(t, rayService().ClusterSpec(oldSpec).Obj(), active).
		Annotation(rayv1.AnnotationDeletionDeadline, deadline(t0)).Annotation("user", "dropped").Obj()
	e := newEnv(t, []client.Object{rs, current})
	s := newScope(rs, t0)
	updated, err := e.r.updateCluster(context.Background(), s, current)
	if err != nil {
		t.Fatal(err)
	}
	stored := &rayv1.RayCluster{}
	if err := e.client.Get(context.Background(), client.ObjectKeyFromObject(current), stored); err != nil {
		t.Fatal(err)
	}
	hash, _ := clusterowner.SpecHash(spec)
	type view struct {
		Suspend     *bool
		Replicas    map[string]int32
		Annotations map[string]string
	}
	got := view{Suspend: stored.Spec.Suspend, Replicas: map[string]int32{}, Annotations: stored.Annotations}
	for _, g := range stored.Spec.WorkerGroupSpecs {
		got.Replicas[g.GroupName] = *g.Replicas
	}
	want := view{
		Suspend:  ptr.To(true),
		Replicas: map[string]int32{"small": 5, "extra": 2},
		Annotations: map[string]string{
			rayv1.LabelHashWithoutReplicas:     hash,
			rayv1.LabelNumWorkerGroups:         "2",
			rayv1.LabelKubeRayVersion:          testOperatorVersion,
			rayv1.AnnotationAppliedServeConfig: serveapps.Record(rs.Spec.ServeConfigV2),
			rayv1.AnnotationDeletionDeadline:   deadline(t0),
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("stored cluster (-want +got):\n%s", diff)
	}
	if updated.ResourceVersion != stored.ResourceVersion {
		t.Errorf("updateCluster returned resourceVersion %s, stored %s", updated.ResourceVersion, stored.ResourceVersion)
	}
}
