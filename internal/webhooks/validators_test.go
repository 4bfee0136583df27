package webhooks

import (
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/testing/wrappers"
	"github.com/ray-operator/ray-operator/internal/validation"
)

func cluster(name string, groups ...string) *rayv1.RayCluster {
	spec := wrappers.MakeRayClusterSpec()
	for _, g := range groups {
		spec.WorkerGroup(g, 1, 0, 1)
	}
	return &rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: *spec.Obj()}
}

func withTLS(rc *rayv1.RayCluster) *rayv1.RayCluster {
	rc.Spec.TLSOptions = &rayv1.TLSOptions{Enabled: new(true)}
	return rc
}

func withNetworkPolicy(rc *rayv1.RayCluster) *rayv1.RayCluster {
	rc.Spec.NetworkPolicy = &rayv1.NetworkPolicyConfig{}
	return rc
}

func withRolling(rc *rayv1.RayCluster, surge, unavailable int32) *rayv1.RayCluster {
	rc.Spec.UpgradeStrategy = &rayv1.RayClusterUpgradeStrategy{
		Type: ptr.To(rayv1.RayClusterRollingUpdate),
		RollingUpdate: &rayv1.RayClusterRollingUpdateOptions{
			MaxSurge: ptr.To(intstr.FromInt32(surge)), MaxUnavailable: ptr.To(intstr.FromInt32(unavailable)),
		},
	}
	return rc
}

func TestValidators(t *testing.T) {
	rc := validator[*rayv1.RayCluster]{kind: rayv1.KindRayCluster, check: rayClusterErrors(validation.NoFeatureGates{})}
	rj := validator[*rayv1.RayJob]{kind: rayv1.KindRayJob, check: rayJobErrors}
	rs := validator[*rayv1.RayService]{kind: rayv1.KindRayService, check: rayServiceErrors}
	cj := validator[*rayv1.RayCronJob]{kind: rayv1.KindRayCronJob, check: rayCronJobErrors(validation.NoFeatureGates{})}
	cron := func(schedule string) *rayv1.RayCronJob {
		return &rayv1.RayCronJob{ObjectMeta: metav1.ObjectMeta{Name: "cron"}, Spec: rayv1.RayCronJobSpec{
			Schedule: schedule, JobTemplate: rayv1.RayJobSpec{Entrypoint: "x", RayClusterSpec: wrappers.MakeRayClusterSpec().Obj()},
		}}
	}
	tests := map[string]struct {
		err  error
		want []string // empty: accepted
	}{
		"valid RayCluster":             {err: rc.validate(cluster("ok", "a", "b"))},
		"RayCluster long name and dup": {err: rc.validate(cluster(strings.Repeat("a", 54), "a", "a")), want: []string{"metadata.name", "no more than 53", "spec.workerGroupSpecs[1].groupName", "must be unique"}},
		"RayCluster tlsOptions without the gate": {
			err:  rc.validate(withTLS(cluster("tls", "a"))),
			want: []string{"spec:", "spec.tlsOptions requires the RayClusterMTLS feature gate to be enabled"},
		},
		"RayCluster networkPolicy without the gate": {
			err:  rc.validate(withNetworkPolicy(cluster("np", "a"))),
			want: []string{"spec:", "spec.networkPolicy requires the RayClusterNetworkPolicy feature gate to be enabled"},
		},
		"valid RayJob":        {err: rj.validate(&rayv1.RayJob{ObjectMeta: metav1.ObjectMeta{Name: "job"}})},
		"RayJob not DNS-1035": {err: rj.validate(&rayv1.RayJob{ObjectMeta: metav1.ObjectMeta{Name: "Job"}}), want: []string{"metadata.name", "DNS1035"}},
		"RayService bad timeout only": {
			err:  rs.validate(&rayv1.RayService{ObjectMeta: metav1.ObjectMeta{Name: "svc", Annotations: map[string]string{rayv1.AnnotationInitializingTimeout: "-5"}}}),
			want: []string{"metadata.annotations[ray.io/initializing-timeout]", "positive integer"},
		},
		"RayService retry back-off without a timeout": {
			err: rs.validate(&rayv1.RayService{ObjectMeta: metav1.ObjectMeta{Name: "svc"}, Spec: rayv1.RayServiceSpec{
				UpgradeStrategy: &rayv1.RayServiceUpgradeStrategy{PendingClusterRetryBackoffSeconds: ptr.To[int32](60)},
			}}),
			want: []string{"spec.upgradeStrategy", "PendingClusterRetryBackoffSeconds needs Spec.UpgradeStrategy.PendingClusterTimeoutSeconds"},
		},
		"valid RayService upgrade deadline": {
			err: rs.validate(&rayv1.RayService{ObjectMeta: metav1.ObjectMeta{Name: "svc"}, Spec: rayv1.RayServiceSpec{
				UpgradeStrategy: &rayv1.RayServiceUpgradeStrategy{
					PendingClusterTimeoutSeconds: ptr.To[int32](600), PendingClusterRetryBackoffSeconds: ptr.To[int32](60),
				},
			}}),
		},
		"RayCluster rolling update with both limits 0": {
			err:  rc.validate(withRolling(cluster("roll", "a"), 0, 0)),
			want: []string{"spec.upgradeStrategy", "maxUnavailable and maxSurge may not both be 0"},
		},
		"valid RayCluster rolling update": {err: rc.validate(withRolling(cluster("roll", "a"), 1, 0))},
		"RayJob with a rolling update": {
			err: rj.validate(&rayv1.RayJob{ObjectMeta: metav1.ObjectMeta{Name: "job"}, Spec: rayv1.RayJobSpec{
				RayClusterSpec: &withRolling(cluster("x"), 1, 1).Spec}}),
			want: []string{"spec.rayClusterSpec.upgradeStrategy", "RollingUpdate is only for standalone RayClusters"},
		},
		"RayService with a rolling update": {
			err: rs.validate(&rayv1.RayService{ObjectMeta: metav1.ObjectMeta{Name: "svc"}, Spec: rayv1.RayServiceSpec{
				RayClusterSpec: withRolling(cluster("x"), 1, 1).Spec}}),
			want: []string{"spec.rayClusterConfig.upgradeStrategy", "RollingUpdate is only for standalone RayClusters"},
		},
		"valid RayCronJob":        {err: cj.validate(cron("@hourly"))},
		"RayCronJob bad schedule": {err: cj.validate(cron("61 * * * *")), want: []string{"spec:", "not a valid cron schedule"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if len(tc.want) == 0 {
				if tc.err != nil {
					t.Fatalf("rejected: %v", tc.err)
				}
				return
			}
			if !apierrors.IsInvalid(tc.err) {
				t.Fatalf("got %v, want an Invalid error", tc.err)
			}
			for _, w := range tc.want {
				if !strings.Contains(tc.err.Error(), w) {
					t.Errorf("%q does not mention %q", tc.err, w)
				}
			}
		})
	}
}

func TestOptionsValidate(t *testing.T) {
	ok := Defaults()
	ok.Enabled, ok.Namespace = true, "ray-system"
	external := Defaults()
	external.Enabled, external.CertManagement = true, CertsExternal
	noNamespace := Defaults()
	noNamespace.Enabled = true
	badMode := ok
	badMode.CertManagement = "cert-manager"
	disabled := Defaults()
	disabled.CertManagement = "anything"
	tests := map[string]struct {
		o    Options
		want string
	}{
		"internal with a namespace":      {o: ok},
		"external needs no namespace":    {o: external},
		"disabled is never checked":      {o: disabled},
		"internal without a namespace":   {o: noNamespace, want: "POD_NAMESPACE"},
		"unknown certificate management": {o: badMode, want: `--webhook-cert-management "cert-manager"`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			err := tc.o.Validate()
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("Validate() = %v, want %q", err, tc.want)
			}
		})
	}
}
