package raycluster

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/rollingupdate"
)

func rollingCluster(strategy rayv1.RayClusterUpgradeType, replicas int32) *rayv1.RayCluster {
	return makeCluster("rc").worker("small", replicas).with(func(rc *rayv1.RayCluster) {
		rc.Spec.UpgradeStrategy = &rayv1.RayClusterUpgradeStrategy{Type: ptr.To(strategy)}
		if strategy == rayv1.RayClusterRollingUpdate {
			rc.Spec.UpgradeStrategy.RollingUpdate = &rayv1.RayClusterRollingUpdateOptions{
				MaxSurge: ptr.To(intstr.FromInt32(1)), MaxUnavailable: ptr.To(intstr.FromInt32(0)),
			}
		}
	}).obj()
}

// TestRollingUpdatePass drives a RollingUpdate of 2 workers with maxSurge 1,
// maxUnavailable 0 pass by pass over the fake client: one extra Pod, then
// one old Pod deleted once it is ready, and so on.
func TestRollingUpdatePass(t *testing.T) {
	h := newHarness(t, Options{}, rollingCluster(rayv1.RayClusterRollingUpdate, 2))
	workers := groupPodLabels("small")
	h.mustReconcile("rc", 1)
	h.setPodStatus(headPodLabels, runningReady)
	h.setPodStatus(workers, runningReady)
	old := h.podNames(workers)
	for _, p := range h.pods(workers) {
		if p.Annotations[rollingupdate.AnnotationTemplateHash] == "" {
			t.Fatalf("worker %s carries no template hash", p.Name)
		}
	}
	rc := h.cluster("rc")
	rc.Spec.WorkerGroupSpecs[0].Template.Spec.Containers[0].Image = "rayproject/ray:2.53.0"
	h.update(rc)
	h.eventStrings()

	h.mustReconcile("rc", 1)
	pods := h.pods(workers)
	if len(pods) != 3 || !slices.ContainsFunc(pods, isNewImage) {
		t.Fatalf("after the first step: %v, want the 2 old Pods and 1 new", podImages(pods))
	}
	if ev := h.eventStrings(); !slices.ContainsFunc(ev, func(e string) bool {
		return strings.Contains(e, "RollingUpdateBatch") && strings.Contains(e, "deleting 0 out-of-date Pods [] and creating 1; 0 of 2")
	}) {
		t.Errorf("events %v, want a RollingUpdateBatch", ev)
	}
	h.mustReconcile("rc", 1)
	if n := len(h.pods(workers)); n != 3 {
		t.Fatalf("the new Pod is not ready yet: %d Pods, want 3 (no old one deleted)", n)
	}
	for range 6 {
		h.setPodStatus(workers, runningReady)
		h.mustReconcile("rc", 1)
	}
	pods = h.pods(workers)
	if len(pods) != 2 || !isNewImage(pods[0]) || !isNewImage(pods[1]) {
		t.Fatalf("at the end: %v, want 2 new Pods", podImages(pods))
	}
	for _, p := range pods {
		if slices.Contains(old, p.Name) {
			t.Errorf("old Pod %s kept", p.Name)
		}
	}
}

// TestRollingUpdateOffLeavesPodsAlone: with None, no hash on workers and no
// replacement, as KubeRay.
func TestRollingUpdateOffLeavesPodsAlone(t *testing.T) {
	h := newHarness(t, Options{}, rollingCluster(rayv1.RayClusterUpgradeNone, 2))
	workers := groupPodLabels("small")
	h.mustReconcile("rc", 1)
	h.setPodStatus(workers, runningReady)
	before := h.podNames(workers)
	for _, p := range h.pods(workers) {
		if _, ok := p.Annotations[rollingupdate.AnnotationTemplateHash]; ok {
			t.Fatalf("worker %s carries a template hash without RollingUpdate", p.Name)
		}
	}
	rc := h.cluster("rc")
	rc.Spec.WorkerGroupSpecs[0].Template.Spec.Containers[0].Image = "rayproject/ray:2.53.0"
	h.update(rc)
	h.mustReconcile("rc", 2)
	if after := h.podNames(workers); !slices.Equal(before, after) {
		t.Errorf("workers %v became %v", before, after)
	}
}

func isNewImage(p corev1.Pod) bool { return p.Spec.Containers[0].Image == "rayproject/ray:2.53.0" }

func podImages(pods []corev1.Pod) []string {
	var out []string
	for _, p := range pods {
		out = append(out, p.Name+"="+p.Spec.Containers[0].Image)
	}
	return out
}

// TestRollingUpdateBlocked: minReplicas = replicas and maxSurge 0 leave no
// way forward: a Warning event says so and no Pod is touched.
func TestRollingUpdateBlocked(t *testing.T) {
	rc := rollingCluster(rayv1.RayClusterRollingUpdate, 2)
	rc.Spec.WorkerGroupSpecs[0].MinReplicas = ptr.To[int32](2)
	rc.Spec.UpgradeStrategy.RollingUpdate = &rayv1.RayClusterRollingUpdateOptions{
		MaxSurge: ptr.To(intstr.FromInt32(0)), MaxUnavailable: ptr.To(intstr.FromInt32(1)),
	}
	h := newHarness(t, Options{}, rc)
	workers := groupPodLabels("small")
	h.mustReconcile("rc", 1)
	h.setPodStatus(workers, runningReady)
	before := h.podNames(workers)
	rc = h.cluster("rc")
	rc.Spec.WorkerGroupSpecs[0].Template.Spec.Containers[0].Image = "rayproject/ray:2.53.0"
	h.update(rc)
	h.eventStrings()
	h.mustReconcile("rc", 1)
	if after := h.podNames(workers); !slices.Equal(before, after) {
		t.Errorf("workers %v became %v", before, after)
	}
	want := "Warning RollingUpdateBlocked Worker group small: 2 out-of-date Pods cannot be replaced: rollingUpdate allows no extra Pod (maxSurge, or maxReplicas with the autoscaler), and minReplicas (2) or maxUnavailable allows no unready one"
	if ev := h.eventStrings(); !slices.Contains(ev, want) {
		t.Errorf("events %q, want %q", ev, want)
	}
}
