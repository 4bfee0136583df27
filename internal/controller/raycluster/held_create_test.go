package raycluster

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// sentTogether holds the head Service's create until the head Pod's create
// has been sent too: a pass that sends them one after the other gets the
// Service refused once the wait runs out.
func sentTogether(wait time.Duration) interceptor.Funcs {
	headPodSent := make(chan struct{})
	return interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			switch {
			case obj.GetLabels()[rayv1.LabelNodeType] == string(rayv1.HeadNode) && isPod(obj):
				close(headPodSent)
			case isService(obj):
				select {
				case <-headPodSent:
				case <-time.After(wait):
					return errors.New("the head Pod's create was not sent while the head Service's was in flight")
				}
			}
			return c.Create(ctx, obj, opts...)
		},
	}
}

func isPod(obj client.Object) bool     { _, ok := obj.(*corev1.Pod); return ok }
func isService(obj client.Object) bool { _, ok := obj.(*corev1.Service); return ok }

// TestHeadServiceAndHeadPodInOneRound: a new cluster's head Service and head
// Pod are created in one round trip, the Service's event first, and the
// workers after them.
func TestHeadServiceAndHeadPodInOneRound(t *testing.T) {
	h := newHarnessWithFuncs(t, Options{}, sentTogether(10*time.Second), makeCluster("rc").worker("small", 1).obj())
	h.mustReconcile("rc", 1)
	var svc corev1.Service
	if err := h.c.Get(t.Context(), types.NamespacedName{Namespace: testNamespace, Name: "rc-head-svc"}, &svc); err != nil {
		t.Fatalf("head Service: %v", err)
	}
	if got := len(h.pods(headPodLabels)); got != 1 {
		t.Errorf("head Pods = %d, want 1", got)
	}
	if got := len(h.pods(groupPodLabels("small"))); got != 1 {
		t.Errorf("worker Pods = %d, want 1", got)
	}
	if got := h.eventReasons(); len(got) != 3 || got[0] != "Normal CreatedService" || got[1] != "Normal CreatedHeadPod" {
		t.Errorf("events = %q, want CreatedService, CreatedHeadPod, CreatedWorkerPod", got)
	}
}

// refuseServices makes the API refuse every Service create while *refuse.
func refuseServices(refuse *bool) interceptor.Funcs {
	return interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if *refuse && isService(obj) {
				return errors.New("exceeded quota: services")
			}
			return c.Create(ctx, obj, opts...)
		},
	}
}

// TestRefusedHeadServiceStopsBeforeWorkers: as in KubeRay, no worker is
// created while the head Service cannot be; the head Pod, sent in the same
// round, is. The refusal is a warning event and the pass's error; the next
// pass creates the Service and the workers.
func TestRefusedHeadServiceStopsBeforeWorkers(t *testing.T) {
	refuse := true
	h := newHarnessWithFuncs(t, Options{}, refuseServices(&refuse), makeCluster("rc").worker("small", 2).obj())
	_, err := h.reconcile("rc")
	if err == nil || !strings.Contains(err.Error(), "exceeded quota: services") {
		t.Fatalf("Reconcile() error = %v, want the Service's refusal", err)
	}
	if got := len(h.pods(groupPodLabels("small"))); got != 0 {
		t.Errorf("worker Pods = %d after the refused head Service, want 0", got)
	}
	if got := len(h.pods(headPodLabels)); got != 1 {
		t.Errorf("head Pods = %d, want 1", got)
	}
	if got := h.eventReasons(); len(got) != 2 || got[0] != "Warning FailedToCreateService" || got[1] != "Normal CreatedHeadPod" {
		t.Errorf("events = %q, want FailedToCreateService, CreatedHeadPod", got)
	}

	refuse = false
	h.mustReconcile("rc", 1)
	var svc corev1.Service
	if err := h.c.Get(t.Context(), types.NamespacedName{Namespace: testNamespace, Name: "rc-head-svc"}, &svc); err != nil {
		t.Fatalf("head Service after the next pass: %v", err)
	}
	if got := len(h.pods(groupPodLabels("small"))); got != 2 {
		t.Errorf("worker Pods after the next pass = %d, want 2", got)
	}
}

// TestHeadServiceWithoutPodCreates: a pass that creates no Pod still
// creates the head Service, at its end: a suspended cluster's, and a
// running cluster's whose Service was deleted.
func TestHeadServiceWithoutPodCreates(t *testing.T) {
	suspended := makeCluster("rc").worker("small", 1).with(func(rc *rayv1.RayCluster) { rc.Spec.Suspend = new(true) }).obj()
	h := newHarness(t, Options{}, suspended)
	h.mustReconcile("rc", 1)
	svc := &corev1.Service{}
	if err := h.c.Get(t.Context(), types.NamespacedName{Namespace: testNamespace, Name: "rc-head-svc"}, svc); err != nil {
		t.Fatalf("head Service of the suspended cluster: %v", err)
	}
	if got := h.pods(map[string]string{rayv1.LabelCluster: "rc"}); len(got) != 0 {
		t.Errorf("Pods of the suspended cluster = %d, want 0", len(got))
	}

	rc := h.cluster("rc")
	rc.Spec.Suspend = new(false)
	h.update(rc)
	h.mustReconcile("rc", 1)
	if err := h.c.Delete(t.Context(), svc); err != nil {
		t.Fatal(err)
	}
	h.eventStrings()
	h.mustReconcile("rc", 1)
	if err := h.c.Get(t.Context(), types.NamespacedName{Namespace: testNamespace, Name: "rc-head-svc"}, &corev1.Service{}); err != nil {
		t.Fatalf("head Service recreated: %v", err)
	}
	if got := h.eventReasons(); len(got) != 1 || got[0] != "Normal CreatedService" {
		t.Errorf("events of the pass that recreated the Service = %q, want CreatedService", got)
	}
}

// cacheBehindOnServices makes Service Lists come back empty while *behind,
// as from a cache that has not seen the Services yet.
func cacheBehindOnServices(behind *bool) interceptor.Funcs {
	return interceptor.Funcs{
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			if _, ok := list.(*corev1.ServiceList); ok && *behind {
				return nil
			}
			return c.List(ctx, list, opts...)
		},
	}
}

// TestStatusAndAHeadServiceTheCacheDoesNotShow: a pass that creates the
// head Service and no Pod (a suspended cluster) reports it in the status
// although the cache does not show it yet; a later pass whose cache still
// does not show it (its create finds it there) leaves the status alone
// rather than write one without it.
func TestStatusAndAHeadServiceTheCacheDoesNotShow(t *testing.T) {
	behind := true
	suspended := makeCluster("rc").worker("small", 1).with(func(rc *rayv1.RayCluster) { rc.Spec.Suspend = new(true) }).obj()
	h := newHarnessWithFuncs(t, Options{}, cacheBehindOnServices(&behind), suspended)
	h.mustReconcile("rc", 1)
	status := h.cluster("rc").Status
	if status.Head.ServiceName != "rc-head-svc" || status.Endpoints["dashboard"] != "8265" {
		t.Fatalf("head = %+v, endpoints = %v after the pass that created the Service; want rc-head-svc and its ports", status.Head, status.Endpoints)
	}
	h.mustReconcile("rc", 1)
	if got := h.cluster("rc").Status; got.Head.ServiceName != "rc-head-svc" || got.Endpoints["dashboard"] != "8265" {
		t.Errorf("head = %+v, endpoints = %v after a pass whose cache did not show the Service; want them kept", got.Head, got.Endpoints)
	}
}
