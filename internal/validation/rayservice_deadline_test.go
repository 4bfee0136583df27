package validation

import (
	"testing"

	"k8s.io/utils/ptr"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// TestRayServiceSpecUpgradeDeadline: the upgrade deadline fields must be
// positive, and a retry back-off needs a timeout; unset fields are valid.
func TestRayServiceSpecUpgradeDeadline(t *testing.T) {
	cases := []struct {
		name             string
		timeout, backoff *int32
		want             string
	}{
		{name: "unset"},
		{name: "timeout only", timeout: ptr.To[int32](600)},
		{name: "timeout and backoff", timeout: ptr.To[int32](600), backoff: ptr.To[int32](60)},
		{name: "zero timeout", timeout: ptr.To[int32](0),
			want: "The RayService spec is invalid: Spec.UpgradeStrategy.PendingClusterTimeoutSeconds should be a positive integer, got 0"},
		{name: "negative backoff", timeout: ptr.To[int32](600), backoff: ptr.To[int32](-1),
			want: "The RayService spec is invalid: Spec.UpgradeStrategy.PendingClusterRetryBackoffSeconds should be a positive integer, got -1"},
		{name: "backoff without timeout", backoff: ptr.To[int32](60),
			want: "The RayService spec is invalid: Spec.UpgradeStrategy.PendingClusterRetryBackoffSeconds needs Spec.UpgradeStrategy.PendingClusterTimeoutSeconds: only an upgrade abandoned after that timeout is retried"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rs := &rayv1.RayService{Spec: rayv1.RayServiceSpec{
				RayClusterSpec: *validSpec(),
				UpgradeStrategy: &rayv1.RayServiceUpgradeStrategy{
					PendingClusterTimeoutSeconds: tc.timeout, PendingClusterRetryBackoffSeconds: tc.backoff,
				},
			}}
			err := RayServiceSpec(rs, gates{})
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tc.want {
				t.Errorf("error %q, want %q", got, tc.want)
			}
		})
	}
}
