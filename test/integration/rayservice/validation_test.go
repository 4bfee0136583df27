package rayservice_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// TestInvalidRayServices creates RayServices the API server accepts but the
// operator does not: each gets Ready False with reason ValidationFailed and
// the error as message, a Warning event naming it, and no cluster.
func TestInvalidRayServices(t *testing.T) {
	w := newWorld(t)
	cases := map[string]struct {
		rs          *rayv1.RayService
		wantReason  string
		wantMessage string
	}{
		"an unreadable initializing timeout": {
			rs: rayService("bad-timeout", func(rs *rayv1.RayService) {
				rs.Annotations = map[string]string{rayv1.AnnotationInitializingTimeout: "soon"}
			}),
			wantReason: "InvalidRayServiceMetadata", wantMessage: "annotation ray.io/initializing-timeout has invalid format: soon",
		},
		"a zero initializing timeout": {
			rs: rayService("zero-timeout", func(rs *rayv1.RayService) {
				rs.Annotations = map[string]string{rayv1.AnnotationInitializingTimeout: "0s"}
			}),
			wantReason: "InvalidRayServiceMetadata", wantMessage: "must be a positive duration",
		},
		"a name of 48 characters": {
			rs:         rayService(strings.Repeat("a", 48)),
			wantReason: "InvalidRayServiceMetadata", wantMessage: "RayService name should be no more than 47 characters",
		},
		"an unknown upgrade type": {
			rs: rayService("bad-upgrade", func(rs *rayv1.RayService) {
				rs.Spec.UpgradeStrategy = &rayv1.RayServiceUpgradeStrategy{Type: ptr.To(rayv1.RayServiceUpgradeType("Rolling"))}
			}),
			wantReason: "InvalidRayServiceSpec", wantMessage: "Spec.UpgradeStrategy.Type value Rolling is invalid",
		},
		"a named head Service": {
			rs: rayService("named-head", func(rs *rayv1.RayService) {
				rs.Spec.RayClusterSpec.HeadGroupSpec.HeadService = &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "mine"}}
			}),
			wantReason: "InvalidRayServiceSpec", wantMessage: "headService.metadata.name should not be set",
		},
		"Kubernetes token auth": {
			rs: rayService("token-auth", func(rs *rayv1.RayService) {
				rs.Spec.RayClusterSpec.AuthOptions = &rayv1.AuthOptions{EnableK8sTokenAuth: ptr.To(true)}
			}),
			wantReason: "InvalidRayServiceSpec", wantMessage: "K8s token auth mode is currently not supported for RayService",
		},
		"an invalid cluster spec": {
			rs: rayService("bad-cluster", func(rs *rayv1.RayService) {
				rs.Spec.RayClusterSpec.HeadGroupSpec.RayStartParams = map[string]string{"labels": "a=b"}
			}),
			wantReason: "InvalidRayServiceSpec", wantMessage: "rayStartParams['labels'] is not supported",
		},
		"serveConfigV2 not a YAML map": {
			rs:         rayService("not-a-map", func(rs *rayv1.RayService) { rs.Spec.ServeConfigV2 = "- a\n- b\n" }),
			wantReason: "InvalidRayServiceSpec", wantMessage: "serveConfigV2 is not a YAML map",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			w.create(tc.rs)
			rs := w.waitCondition(tc.rs.Name, rayv1.RayServiceReady, metav1.ConditionFalse, rayv1.RayServiceValidationFailed)
			ready := conditionFor(&rs.Status, rayv1.RayServiceReady)
			if !strings.Contains(ready.Message, tc.wantMessage) {
				t.Errorf("Ready message %q, want it to contain %q", ready.Message, tc.wantMessage)
			}
			if rs.Status.ObservedGeneration != rs.Generation {
				t.Errorf("observedGeneration %d, want %d", rs.Status.ObservedGeneration, rs.Generation)
			}
			ev := w.waitEvent(tc.rs.Name, tc.wantReason)
			if ev.Type != corev1.EventTypeWarning || ev.Action != "Validate" || !strings.HasPrefix(ev.Note, w.ns+"/"+tc.rs.Name+": ") ||
				!strings.Contains(ev.Note, tc.wantMessage) || ev.ReportingController != "rayservice-controller" {
				t.Errorf("event: type %s, action %s, note %q, reporting controller %q", ev.Type, ev.Action, ev.Note, ev.ReportingController)
			}
			if rs.Status.PendingServiceStatus.RayClusterName != "" || rs.Status.ActiveServiceStatus.RayClusterName != "" {
				t.Errorf("a cluster was named: %s", clusterNamesOf(&rs.Status))
			}
		})
	}
	// Every pass on an invalid RayService ends at validation, before any
	// cluster is named, let alone created.
	if got := w.allClusters(); len(got) != 0 {
		t.Errorf("clusters: %v", got)
	}
}

// conditionFor returns a condition of a status, or an empty one.
func conditionFor(st *rayv1.RayServiceStatuses, t rayv1.RayServiceConditionType) metav1.Condition {
	for _, c := range st.Conditions {
		if c.Type == string(t) {
			return c
		}
	}
	return metav1.Condition{}
}

// TestFixingAnInvalidSpecRecovers fixes an invalid RayService that never
// ran: it starts Initializing afresh and comes up as any other.
func TestFixingAnInvalidSpecRecovers(t *testing.T) {
	w := newWorld(t)
	w.create(rayService("svc", func(rs *rayv1.RayService) {
		rs.Spec.UpgradeStrategy = &rayv1.RayServiceUpgradeStrategy{Type: ptr.To(rayv1.RayServiceUpgradeType("Rolling"))}
	}))
	w.waitCondition("svc", rayv1.RayServiceReady, metav1.ConditionFalse, rayv1.RayServiceValidationFailed)

	w.editSpec("svc", func(rs *rayv1.RayService) { rs.Spec.UpgradeStrategy.Type = ptr.To(rayv1.RayServiceNewCluster) })
	rs := w.waitCondition("svc", rayv1.RayServiceReady, metav1.ConditionFalse, rayv1.RayServiceInitializing)
	if s, r := conditionOf(&rs.Status, rayv1.UpgradeInProgress); s != metav1.ConditionFalse || r != string(rayv1.RayServiceInitializing) {
		t.Errorf("UpgradeInProgress = %s/%s, want False/Initializing", s, r)
	}
	w.waitCluster("svc-aaaaa")
	w.bringUp("svc-aaaaa")
	w.waitStatus("svc", "promotion", func(st *rayv1.RayServiceStatuses) bool {
		return st.ActiveServiceStatus.RayClusterName == "svc-aaaaa"
	})
	w.eventually("the head Pod labelled for serving", func() (bool, error) {
		return podLabel(w, "svc-aaaaa-head", rayv1.LabelServe) == "true", nil
	})
	w.syncEndpoints("svc-serve-svc")
	w.waitCondition("svc", rayv1.RayServiceReady, metav1.ConditionTrue, rayv1.NonZeroServeEndpoints)
}

// TestServingRayServiceMadeInvalid makes a serving RayService invalid and
// then valid again: meanwhile its cluster and Services are kept (nothing
// is reconciled, nothing is torn down), and once fixed Ready follows its
// endpoints again.
func TestServingRayServiceMadeInvalid(t *testing.T) {
	w := newWorld(t)
	w.serving(rayService("svc"))

	w.editSpec("svc", func(rs *rayv1.RayService) {
		rs.Spec.UpgradeStrategy = &rayv1.RayServiceUpgradeStrategy{Type: ptr.To(rayv1.RayServiceUpgradeType("Rolling"))}
		withImage("rayproject/ray:2.61.0")(rs)
	})
	rs := w.waitCondition("svc", rayv1.RayServiceReady, metav1.ConditionFalse, rayv1.RayServiceValidationFailed)
	if rs.Status.ActiveServiceStatus.RayClusterName != "svc-aaaaa" || rs.Status.PendingServiceStatus.RayClusterName != "" {
		t.Errorf("clusters in status: %s", clusterNamesOf(&rs.Status))
	}
	if diff := cmp.Diff([]string{"svc-aaaaa"}, w.allClusters()); diff != "" {
		t.Errorf("clusters (-want +got):\n%s", diff)
	}
	if w.service("svc-serve-svc") == nil || w.service("svc-head-svc") == nil {
		t.Error("a Service was deleted")
	}
	if !controllerutil.ContainsFinalizer(rs, rayv1.RayServiceFinalizer) {
		t.Error("finalizer removed")
	}

	w.editSpec("svc", func(rs *rayv1.RayService) {
		rs.Spec.UpgradeStrategy = &rayv1.RayServiceUpgradeStrategy{Type: ptr.To(rayv1.RayServiceUpgradeNone)}
	})
	rs = w.waitCondition("svc", rayv1.RayServiceReady, metav1.ConditionTrue, rayv1.NonZeroServeEndpoints)
	if rs.Status.ObservedGeneration != rs.Generation || rs.Status.PendingServiceStatus.RayClusterName != "" {
		t.Errorf("status: generation %d/%d, %s", rs.Status.ObservedGeneration, rs.Generation, clusterNamesOf(&rs.Status))
	}
}
