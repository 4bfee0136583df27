package raycluster

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"

	configv1alpha1 "github.com/ray-operator/ray-operator/api/config/v1alpha1"
	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

func TestReconcileCreatesACluster(t *testing.T) {
	h := newHarness(t, Options{}, makeCluster("rc").worker("small", 2).obj())

	res, err := h.reconcile("rc")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(ctrl.Result{RequeueAfter: shortRequeue}, res); diff != "" {
		t.Errorf("result (-want +got):\n%s", diff)
	}
	// One event per kind of Pod change in a pass, naming every Pod.
	workers := h.pods(groupPodLabels("small"))
	wantEvents := []string{
		"Normal CreatedService Created service default/rc-head-svc",
		"Normal CreatedHeadPod Created head Pod default/" + h.pods(headPodLabels)[0].Name,
		"Normal CreatedWorkerPod Created 2 worker Pods of group small in default: " + workers[0].Name + ", " + workers[1].Name,
	}
	if diff := cmp.Diff(wantEvents, h.eventStrings()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if got := len(h.pods(headPodLabels)); got != 1 {
		t.Errorf("head Pods = %d, want 1", got)
	}
	if got := len(h.pods(groupPodLabels("small"))); got != 2 {
		t.Errorf("worker Pods = %d, want 2", got)
	}

	// Pods come up: the cluster becomes ready, and stays so without writes.
	h.setPodStatus(podSelector(h.cluster("rc"), nil), runningReady)
	h.mustReconcile("rc", 1)
	status := h.cluster("rc").Status
	if status.State != rayv1.Ready {
		t.Errorf("state = %q, want ready", status.State)
	}
	for _, c := range []rayv1.RayClusterConditionType{rayv1.RayClusterProvisioned, rayv1.HeadPodReady} {
		if !meta.IsStatusConditionTrue(status.Conditions, string(c)) {
			t.Errorf("condition %s not true: %+v", c, status.Conditions)
		}
	}
	if status.ReadyWorkerReplicas != 2 || status.AvailableWorkerReplicas != 2 || status.DesiredWorkerReplicas != 2 {
		t.Errorf("replicas ready/available/desired = %d/%d/%d, want 2/2/2",
			status.ReadyWorkerReplicas, status.AvailableWorkerReplicas, status.DesiredWorkerReplicas)
	}
	if got := status.DesiredCPU.String(); got != "3" {
		t.Errorf("desiredCPU = %s, want 3", got)
	}
	if status.Head.PodIP != "10.0.0.1" || status.Head.ServiceName != "rc-head-svc" || status.Head.ServiceIP != "10.0.0.1" {
		t.Errorf("head = %+v", status.Head)
	}
	if status.Endpoints["dashboard"] != "8265" {
		t.Errorf("endpoints = %v", status.Endpoints)
	}
	if res := h.mustReconcile("rc", 1); res.RequeueAfter != defaultRequeue {
		t.Errorf("steady-state requeue = %v, want %v", res.RequeueAfter, defaultRequeue)
	}
}

// TestCreationEventsPerPass: with --creation-events=per-pass the first
// pass records one event for the Service and all Pods it created, naming
// each; a later pass that only creates worker Pods keeps KubeRay's reason.
func TestCreationEventsPerPass(t *testing.T) {
	opts := Options{CreationEvents: configv1alpha1.CreationEventsPerPass}
	h := newHarness(t, opts, makeCluster("rc").worker("small", 2).obj())
	h.mustReconcile("rc", 1)
	workers := h.pods(groupPodLabels("small"))
	want := []string{"Normal CreatedResources Created in default: service rc-head-svc; head Pod " +
		h.pods(headPodLabels)[0].Name + "; 2 worker Pods of group small: " + workers[0].Name + ", " + workers[1].Name}
	if diff := cmp.Diff(want, h.eventStrings()); diff != "" {
		t.Errorf("events of the first pass (-want +got):\n%s", diff)
	}

	rc := h.cluster("rc")
	rc.Spec.WorkerGroupSpecs[0].Replicas = new(int32(3))
	h.update(rc)
	h.mustReconcile("rc", 1)
	added := h.pods(groupPodLabels("small"))
	if len(added) != 3 {
		t.Fatalf("worker Pods = %d, want 3", len(added))
	}
	var newest string
	for _, p := range added {
		if p.Name != workers[0].Name && p.Name != workers[1].Name {
			newest = p.Name
		}
	}
	want = []string{"Normal CreatedWorkerPod Created worker Pod default/" + newest}
	if diff := cmp.Diff(want, h.eventStrings()); diff != "" {
		t.Errorf("events of the scale-up (-want +got):\n%s", diff)
	}
}

func TestReconcileSkipsOtherManagers(t *testing.T) {
	other := rayv1.MultiKueueController
	h := newHarness(t, Options{}, makeCluster("rc").worker("small", 1).with(func(rc *rayv1.RayCluster) { rc.Spec.ManagedBy = &other }).obj())
	if res := h.mustReconcile("rc", 1); res != (ctrl.Result{}) {
		t.Errorf("result = %+v, want none", res)
	}
	if pods := h.pods(nil); len(pods) != 0 {
		t.Errorf("created %d Pods for a cluster managed elsewhere", len(pods))
	}
}

func TestReconcileInvalidSpec(t *testing.T) {
	h := newHarness(t, Options{}, makeCluster("rc").worker("small", 1).with(func(rc *rayv1.RayCluster) {
		rc.Spec.WorkerGroupSpecs[0].MinReplicas = new(int32(5))
		rc.Spec.WorkerGroupSpecs[0].MaxReplicas = new(int32(1))
	}).obj())

	for range 2 {
		res, err := h.reconcile("rc")
		if err != nil || res != (ctrl.Result{}) {
			t.Fatalf("Reconcile() = %+v, %v; want no requeue and no error", res, err)
		}
	}
	cond := meta.FindStatusCondition(h.cluster("rc").Status.Conditions, string(rayv1.RayClusterValidationFailed))
	if cond == nil || cond.Status != "True" || cond.Reason != reasonInvalidSpec ||
		cond.Message != "worker group small has minReplicas 5 greater than maxReplicas 1" {
		t.Errorf("ValidationFailed condition = %+v", cond)
	}
	if diff := cmp.Diff([]string{"Warning InvalidRayClusterSpec", "Warning InvalidRayClusterSpec"}, h.eventReasons()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if pods := h.pods(nil); len(pods) != 0 {
		t.Errorf("created %d Pods for an invalid cluster", len(pods))
	}

	// Fixing the spec removes the condition.
	rc := h.cluster("rc")
	rc.Spec.WorkerGroupSpecs[0].MaxReplicas = new(int32(10))
	h.update(rc)
	h.mustReconcile("rc", 1)
	if cond := meta.FindStatusCondition(h.cluster("rc").Status.Conditions, string(rayv1.RayClusterValidationFailed)); cond != nil {
		t.Errorf("ValidationFailed still set after the fix: %+v", cond)
	}
}

func TestReconcileInvalidStatusIsRetried(t *testing.T) {
	h := newHarness(t, Options{}, makeCluster("rc").with(func(rc *rayv1.RayCluster) {
		rc.Status.Conditions = []metav1.Condition{
			{Type: string(rayv1.RayClusterSuspending), Status: "True", Reason: "x"},
			{Type: string(rayv1.RayClusterSuspended), Status: "True", Reason: "x"},
		}
	}).obj())
	if _, err := h.reconcile("rc"); err == nil {
		t.Fatal("Reconcile() error = nil, want the status error")
	}
	if diff := cmp.Diff([]string{"Warning InvalidRayClusterStatus"}, h.eventReasons()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

func TestAutoscalerServiceAccountNamedByUserMustExist(t *testing.T) {
	h := newHarness(t, Options{}, makeCluster("rc").with(func(rc *rayv1.RayCluster) {
		rc.Spec.EnableInTreeAutoscaling = new(true)
		rc.Spec.HeadGroupSpec.Template.Spec.ServiceAccountName = "my-sa"
	}).obj())
	_, err := h.reconcile("rc")
	if err == nil || !containsAll(err.Error(), "my-sa", "not found") {
		t.Fatalf("Reconcile() error = %v, want a missing service account error", err)
	}
	if diff := cmp.Diff([]string{"Warning AutoscalerServiceAccountNotFound"}, h.eventReasons()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if pods := h.pods(nil); len(pods) != 0 {
		t.Errorf("created %d Pods despite the failed step", len(pods))
	}
}

func TestAutoscalerRBACAndIngress(t *testing.T) {
	h := newHarness(t, Options{}, makeCluster("rc").with(func(rc *rayv1.RayCluster) {
		rc.Spec.EnableInTreeAutoscaling = new(true)
		rc.Spec.HeadGroupSpec.EnableIngress = new(true)
	}).obj())
	h.mustReconcile("rc", 1)
	want := []string{"Normal CreatedServiceAccount", "Normal CreatedRole", "Normal CreatedRoleBinding", "Normal CreatedIngress", "Normal CreatedService", "Normal CreatedHeadPod"}
	if diff := cmp.Diff(want, h.eventReasons()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	// A second pass creates nothing new.
	h.mustReconcile("rc", 1)
	if got := h.eventReasons(); len(got) != 0 {
		t.Errorf("second pass events = %v, want none", got)
	}
}

func TestDeletesUnhealthyPods(t *testing.T) {
	h := newHarness(t, Options{}, makeCluster("rc").worker("small", 1).obj())
	h.mustReconcile("rc", 1)
	h.eventReasons()
	h.setPodStatus(headPodLabels, func(p *corev1.Pod) { p.Status.Phase = corev1.PodFailed })
	if _, err := h.reconcile("rc"); err == nil {
		t.Fatal("want an error after deleting the failed head")
	}
	if diff := cmp.Diff([]string{"Normal DeletedHeadPod"}, h.eventReasons()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	h.mustReconcile("rc", 1)
	if diff := cmp.Diff([]string{"Normal CreatedHeadPod"}, h.eventReasons()); diff != "" {
		t.Errorf("events after recreation (-want +got):\n%s", diff)
	}
}

func containsAll(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}

func TestAuthSecretAndRoute(t *testing.T) {
	h := newHarness(t, Options{UseRoute: true}, makeCluster("rc").with(func(rc *rayv1.RayCluster) {
		rc.Spec.AuthOptions = &rayv1.AuthOptions{Mode: rayv1.AuthModeToken}
		rc.Spec.HeadGroupSpec.EnableIngress = new(true)
	}).obj())
	h.mustReconcile("rc", 1)
	want := []string{"Normal CreatedRoute", "Normal CreatedSecret", "Normal CreatedService", "Normal CreatedHeadPod"}
	if diff := cmp.Diff(want, h.eventReasons()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	secret := &corev1.Secret{}
	if err := h.c.Get(t.Context(), types.NamespacedName{Namespace: testNamespace, Name: "rc"}, secret); err != nil {
		t.Fatal(err)
	}
	if len(secret.Data["auth_token"]) == 0 {
		t.Error("auth Secret without a token")
	}
	// The token is generated once: a second pass keeps the Secret.
	h.mustReconcile("rc", 1)
	again := &corev1.Secret{}
	if err := h.c.Get(t.Context(), types.NamespacedName{Namespace: testNamespace, Name: "rc"}, again); err != nil {
		t.Fatal(err)
	}
	if string(again.Data["auth_token"]) != string(secret.Data["auth_token"]) {
		t.Error("auth token changed on the second pass")
	}
}

func TestDuplicateHeadServicesAreAnError(t *testing.T) {
	rc := makeCluster("rc").obj()
	h := newHarness(t, Options{}, rc)
	h.mustReconcile("rc", 1)
	extra := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "extra", Namespace: testNamespace, Labels: map[string]string{}}}
	var svcs corev1.ServiceList
	if err := h.c.List(t.Context(), &svcs); err != nil || len(svcs.Items) != 1 {
		t.Fatalf("services = %v, %v", svcs.Items, err)
	}
	extra.Labels = svcs.Items[0].Labels
	if err := h.c.Create(t.Context(), extra); err != nil {
		t.Fatal(err)
	}
	if _, err := h.reconcile("rc"); err == nil || !strings.Contains(err.Error(), "2 head services found") {
		t.Errorf("Reconcile() error = %v, want a duplicate head service error", err)
	}
}
