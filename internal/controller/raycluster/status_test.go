package raycluster

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// testPod is a Pod of cluster "rc" in the given phase.
func testPod(name string, nodeType rayv1.RayNodeType, group string, phase corev1.PodPhase, ready bool) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: testNamespace, Labels: map[string]string{
			rayv1.LabelCluster: "rc", rayv1.LabelNodeType: string(nodeType), rayv1.LabelGroup: group,
		}},
		Spec:   corev1.PodSpec{Containers: []corev1.Container{{Name: "ray"}}},
		Status: corev1.PodStatus{Phase: phase, PodIP: "10.1.1.1"},
	}
	if phase == corev1.PodRunning {
		status := corev1.ConditionFalse
		if ready {
			status = corev1.ConditionTrue
		}
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: status}}
	}
	return p
}

// conditionSummary is "Status/Reason" per condition type.
func conditionSummary(conds []metav1.Condition) map[string]string {
	out := map[string]string{}
	for _, c := range conds {
		out[c.Type] = string(c.Status) + "/" + c.Reason
	}
	return out
}

func TestCalculateStatus(t *testing.T) {
	head := func(phase corev1.PodPhase, ready bool) client.Object {
		return testPod("head", rayv1.HeadNode, rayv1.HeadGroupName, phase, ready)
	}
	worker := func(name string, phase corev1.PodPhase, ready bool) client.Object {
		return testPod(name, rayv1.WorkerNode, "small", phase, ready)
	}
	type want struct {
		State                     rayv1.ClusterState
		Ready, Available, Desired int32
		Min, Max                  int32
		CPU, GPU                  string
		Conditions                map[string]string
	}
	cases := map[string]struct {
		cluster      *rayv1.RayCluster
		pods         []client.Object
		reconcileErr error
		want         want
	}{
		"no Pods yet": {
			cluster: makeCluster("rc").worker("small", 2).obj(),
			want: want{Desired: 2, Max: 10, CPU: "3", GPU: "0", Conditions: map[string]string{
				"HeadPodReady": "False/HeadPodNotFound", "RayClusterProvisioned": "False/RayClusterPodsProvisioning",
				"RayClusterSuspended": "False/RayClusterSuspended", "RayClusterSuspending": "False/RayClusterSuspending",
			}},
		},
		"one worker not ready": {
			cluster: makeCluster("rc").worker("small", 2).obj(),
			pods:    []client.Object{head(corev1.PodRunning, true), worker("w1", corev1.PodRunning, true), worker("w2", corev1.PodRunning, false)},
			want: want{Ready: 1, Available: 2, Desired: 2, Max: 10, CPU: "3", GPU: "0", Conditions: map[string]string{
				"HeadPodReady": "True/HeadPodRunningAndReady", "RayClusterProvisioned": "False/RayClusterPodsProvisioning",
				"RayClusterSuspended": "False/RayClusterSuspended", "RayClusterSuspending": "False/RayClusterSuspending",
			}},
		},
		"all ready": {
			cluster: makeCluster("rc").worker("small", 2).obj(),
			pods:    []client.Object{head(corev1.PodRunning, true), worker("w1", corev1.PodRunning, true), worker("w2", corev1.PodRunning, true)},
			want: want{State: rayv1.Ready, Ready: 2, Available: 2, Desired: 2, Max: 10, CPU: "3", GPU: "0", Conditions: map[string]string{
				"HeadPodReady": "True/HeadPodRunningAndReady", "RayClusterProvisioned": "True/AllPodRunningAndReadyFirstTime",
				"RayClusterSuspended": "False/RayClusterSuspended", "RayClusterSuspending": "False/RayClusterSuspending",
			}},
		},
		"all ready but a Pod failure": {
			cluster:      makeCluster("rc").worker("small", 1).obj(),
			pods:         []client.Object{head(corev1.PodRunning, true), worker("w1", corev1.PodRunning, true)},
			reconcileErr: errors.Join(errFailedCreateWorkerPod, errors.New("quota exceeded")),
			want: want{Ready: 1, Available: 1, Desired: 1, Max: 10, CPU: "2", GPU: "0", Conditions: map[string]string{
				"HeadPodReady": "True/HeadPodRunningAndReady", "RayClusterProvisioned": "True/AllPodRunningAndReadyFirstTime",
				"ReplicaFailure":      "True/FailedCreateWorkerPod",
				"RayClusterSuspended": "False/RayClusterSuspended", "RayClusterSuspending": "False/RayClusterSuspending",
			}},
		},
		"multi-host group counts hosts, GPUs of any vendor add up": {
			cluster: makeCluster("rc").worker("tpu", 3).with(func(rc *rayv1.RayCluster) {
				g := &rc.Spec.WorkerGroupSpecs[0]
				g.NumOfHosts, g.MinReplicas, g.MaxReplicas = 4, ptr.To[int32](1), ptr.To[int32](5)
				g.Template.Spec.Containers[0].Resources.Limits = corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")}
				rc.Spec.HeadGroupSpec.Template.Spec.Containers[0].Resources.Limits = corev1.ResourceList{"amd.com/gpu": resource.MustParse("2")}
			}).obj(),
			want: want{Desired: 12, Min: 4, Max: 20, CPU: "13", GPU: "14", Conditions: map[string]string{
				"HeadPodReady": "False/HeadPodNotFound", "RayClusterProvisioned": "False/RayClusterPodsProvisioning",
				"RayClusterSuspended": "False/RayClusterSuspended", "RayClusterSuspending": "False/RayClusterSuspending",
			}},
		},
		"suspended worker group is not desired": {
			cluster: makeCluster("rc").worker("small", 2).with(func(rc *rayv1.RayCluster) { rc.Spec.WorkerGroupSpecs[0].Suspend = ptr.To(true) }).obj(),
			pods:    []client.Object{head(corev1.PodRunning, true)},
			want: want{State: rayv1.Ready, Max: 10, CPU: "1", GPU: "0", Conditions: map[string]string{
				"HeadPodReady": "True/HeadPodRunningAndReady", "RayClusterProvisioned": "True/AllPodRunningAndReadyFirstTime",
				"RayClusterSuspended": "False/RayClusterSuspended", "RayClusterSuspending": "False/RayClusterSuspending",
			}},
		},
		"suspend requested": {
			cluster: makeCluster("rc").worker("small", 1).with(func(rc *rayv1.RayCluster) { rc.Spec.Suspend = ptr.To(true) }).obj(),
			pods:    []client.Object{head(corev1.PodPending, false)},
			want: want{Desired: 1, Max: 10, CPU: "2", GPU: "0", Conditions: map[string]string{
				"HeadPodReady": "False/Unknown", "RayClusterProvisioned": "False/RayClusterPodsProvisioning",
				"RayClusterSuspended": "False/RayClusterSuspended", "RayClusterSuspending": "True/RayClusterSuspending",
			}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, Options{}, append(tc.pods, tc.cluster)...)
			s := newScope(h.cluster("rc"), DefaultMaxPodWritesPerPass)
			status, err := h.r.calculateStatus(t.Context(), s, tc.reconcileErr)
			if err != nil {
				t.Fatal(err)
			}
			got := want{
				State: status.State, Ready: status.ReadyWorkerReplicas, Available: status.AvailableWorkerReplicas,
				Desired: status.DesiredWorkerReplicas, Min: status.MinWorkerReplicas, Max: status.MaxWorkerReplicas,
				CPU: status.DesiredCPU.String(), GPU: status.DesiredGPU.String(), Conditions: conditionSummary(status.Conditions),
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
			if status.ObservedGeneration != tc.cluster.Generation {
				t.Errorf("observedGeneration = %d, want %d", status.ObservedGeneration, tc.cluster.Generation)
			}
		})
	}
}

func TestProvisionedIsSticky(t *testing.T) {
	rc := makeCluster("rc").with(func(rc *rayv1.RayCluster) {
		rc.Status.Conditions = []metav1.Condition{{Type: string(rayv1.RayClusterProvisioned), Status: metav1.ConditionTrue, Reason: rayv1.AllPodRunningAndReadyFirstTime}}
	}).obj()
	h := newHarness(t, Options{}, rc, testPod("head", rayv1.HeadNode, rayv1.HeadGroupName, corev1.PodRunning, false))
	status, err := h.r.calculateStatus(t.Context(), newScope(h.cluster("rc"), DefaultMaxPodWritesPerPass), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := conditionSummary(status.Conditions)["RayClusterProvisioned"]; got != "True/AllPodRunningAndReadyFirstTime" {
		t.Errorf("RayClusterProvisioned = %s, want it to stay true when a Pod becomes unready", got)
	}
}

// recordingObserver records the provisioning durations it is given.
type recordingObserver struct{ seen map[string]time.Duration }

func (o *recordingObserver) ObserveProvisioned(name, _ string, d time.Duration) { o.seen[name] = d }
func (o *recordingObserver) ObserveIdleEnded(_, _, _ string)                    {}
func (o *recordingObserver) ObserveRollingUpdateBatch(string, int)              {}
func (o *recordingObserver) Forget(name, _ string)                              { delete(o.seen, name) }

func TestProvisionedDurationMetric(t *testing.T) {
	rc := makeCluster("rc").obj()
	h := newHarness(t, Options{}, rc)
	obs := &recordingObserver{seen: map[string]time.Duration{}}
	h.r.Metrics = obs
	created := h.cluster("rc").CreationTimestamp.Time
	h.clk.SetTime(created)
	h.mustReconcile("rc", 1)
	h.clk.Step(90 * time.Second)
	h.setPodStatus(headPodLabels, runningReady)
	h.mustReconcile("rc", 2)
	if diff := cmp.Diff(map[string]time.Duration{"rc": 90 * time.Second}, obs.seen); diff != "" {
		t.Errorf("observed durations (-want +got):\n%s", diff)
	}
	if err := h.c.Delete(t.Context(), h.cluster("rc")); err != nil {
		t.Fatal(err)
	}
	h.mustReconcile("rc", 1)
	if len(obs.seen) != 0 {
		t.Errorf("metrics of a deleted cluster not forgotten: %v", obs.seen)
	}
}

// TestStatusWaitsForCreatedPods: the pass that creates a cluster's Pods
// leaves the status alone (its cache cannot show them yet); the next pass
// writes it from the Pods. When they are up by then, the cluster's first
// status write is the ready one.
func TestStatusWaitsForCreatedPods(t *testing.T) {
	h := newHarness(t, Options{}, makeCluster("rc").worker("small", 2).obj())
	res := h.mustReconcile("rc", 1)
	if res.RequeueAfter != shortRequeue {
		t.Errorf("requeue %v after creating Pods, want %v", res.RequeueAfter, shortRequeue)
	}
	if st := h.cluster("rc").Status; st.ObservedGeneration != 0 || st.LastUpdateTime != nil || len(st.Conditions) != 0 {
		t.Fatalf("status written by the pass that created the Pods: %+v", st)
	}
	if got := len(h.pods(nil)); got != 3 {
		t.Fatalf("%d Pods, want 3", got)
	}
	h.setPodStatus(podSelector(h.cluster("rc"), nil), runningReady)
	h.mustReconcile("rc", 1)
	st := h.cluster("rc").Status
	if st.State != rayv1.Ready || st.ObservedGeneration != 1 || st.ReadyWorkerReplicas != 2 || st.DesiredWorkerReplicas != 2 {
		t.Errorf("status after the next pass: state %q, observedGeneration %d, ready/desired workers %d/%d; want ready, 1, 2/2",
			st.State, st.ObservedGeneration, st.ReadyWorkerReplicas, st.DesiredWorkerReplicas)
	}
}

// cacheHidingPods makes the named Pods invisible to Lists and Gets while
// they are in hidden, as from a cache that has not seen them yet.
func cacheHidingPods(hidden map[string]bool) interceptor.Funcs {
	return interceptor.Funcs{
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			if err := c.List(ctx, list, opts...); err != nil {
				return err
			}
			if pods, ok := list.(*corev1.PodList); ok {
				pods.Items = slices.DeleteFunc(pods.Items, func(p corev1.Pod) bool { return hidden[p.Name] })
			}
			return nil
		},
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if _, ok := obj.(*corev1.Pod); ok && hidden[key.Name] {
				return apierrors.NewNotFound(corev1.Resource("pods"), key.Name)
			}
			return c.Get(ctx, key, obj, opts...)
		},
	}
}

// TestStatusWaitsForTheCacheToShowCreatedPods: a pass whose cache shows
// the head Pod an earlier pass created but not its workers leaves the
// status alone (it would say one Pod where there are three) and looks
// again soon; once the cache shows them all, the first status written is
// the whole cluster's.
func TestStatusWaitsForTheCacheToShowCreatedPods(t *testing.T) {
	hidden := map[string]bool{}
	h := newHarnessWithFuncs(t, Options{}, cacheHidingPods(hidden), makeCluster("rc").worker("small", 2).obj())
	h.mustReconcile("rc", 1)
	workers := h.pods(map[string]string{rayv1.LabelNodeType: string(rayv1.WorkerNode)})
	if len(workers) != 2 {
		t.Fatalf("%d workers created, want 2", len(workers))
	}
	h.setPodStatus(podSelector(h.cluster("rc"), nil), runningReady)
	for _, p := range workers {
		hidden[p.Name] = true
	}
	before := h.cluster("rc").ResourceVersion
	if res := h.mustReconcile("rc", 1); res.RequeueAfter != shortRequeue {
		t.Errorf("requeue %v while the cache lacks created workers, want %v", res.RequeueAfter, shortRequeue)
	}
	if rc := h.cluster("rc"); rc.ResourceVersion != before {
		t.Fatalf("status written while the cache showed the head alone: %+v", rc.Status)
	}
	if got := len(h.pods(nil)); got != 1 {
		t.Fatalf("%d Pods seen, want the head alone", got)
	}
	clear(hidden)
	h.mustReconcile("rc", 1)
	st := h.cluster("rc").Status
	if st.State != rayv1.Ready || st.ReadyWorkerReplicas != 2 || st.AvailableWorkerReplicas != 2 {
		t.Errorf("status once the cache shows every Pod: state %q, ready/available workers %d/%d; want ready, 2/2",
			st.State, st.ReadyWorkerReplicas, st.AvailableWorkerReplicas)
	}
	if got := len(h.pods(nil)); got != 3 {
		t.Errorf("%d Pods, want 3 (none created twice)", got)
	}
}
