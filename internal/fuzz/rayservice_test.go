package fuzz

import (
	"errors"
	"testing"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/clusterowner"
	"github.com/ray-operator/ray-operator/internal/rayservices"
	"github.com/ray-operator/ray-operator/internal/serveapps"
	"github.com/ray-operator/ray-operator/internal/validation"
)

// FuzzRayService: an accepted RayService makes a cluster that builds like
// any accepted cluster, a Serve config the dashboard can take, and its
// serve Service (or KubeRay's "no serve port" error).
func FuzzRayService(f *testing.F) {
	// The RayService controller's checks, in its order.
	fuzzAccepted(f, rayv1.KindRayService, func(rs *rayv1.RayService) error {
		return errors.Join(validation.RayServiceMetadata(rs.ObjectMeta), validation.RayServiceSpec(rs, gates),
			serveapps.Validate(rs.Spec.ServeConfigV2))
	}, func(t *testing.T, rs *rayv1.RayService) {
		cluster := clusterowner.Build(rs, rayv1.KindRayService, rs.Name+"-abcde", &rs.Spec.RayClusterSpec)
		if err := validateCluster(cluster); err != nil {
			t.Fatalf("an accepted RayService makes a cluster that validation refuses: %v", err)
		}
		checkClusterBuilds(t, cluster)
		if _, err := serveapps.ConfigJSON(rs.Spec.ServeConfigV2, new(int32(50))); err != nil {
			t.Fatalf("an accepted serveConfigV2 does not convert: %v", err)
		}
		_, err := rayservices.BuildRayServiceServeService(rs, cluster)
		if err != nil && !errors.Is(err, rayservices.ErrNoServePort) && !errors.Is(err, rayservices.ErrNoServePortAnywhere) {
			t.Fatalf("serve Service: %v", err)
		}
	})
}
