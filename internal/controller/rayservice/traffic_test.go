package rayservice

import (
	"context"
	"errors"
	"slices"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/ray-operator/ray-operator/internal/incrementalupgrade"
)

// applyVersion applies the first (0) or a changed (1) desired Gateway or
// HTTPRoute of the test RayService.
type applyVersion func(ctx context.Context, r *Reconciler, s *scope, version int) error

func applyGatewayVersion(ctx context.Context, r *Reconciler, s *scope, version int) error {
	class := []string{"istio", "envoy"}[version]
	return r.applyGateway(ctx, s, incrementalupgrade.Gateway(s.rs, incrementalupgrade.Options{GatewayClassName: class}))
}

func applyRouteVersion(ctx context.Context, r *Reconciler, s *scope, version int) error {
	weight := []int32{100, 50}[version]
	return r.applyRoute(ctx, s, incrementalupgrade.HTTPRoute(s.rs, []incrementalupgrade.Backend{{Service: "a-serve-svc", Port: 8000, Weight: weight}}))
}

// TestApplyTrafficObjectEvents pins the events and errors of creating and
// updating the Gateway and the HTTPRoute, done and failed: KubeRay's texts,
// which differ between the two kinds for a failed create.
func TestApplyTrafficObjectEvents(t *testing.T) {
	cases := map[string]struct {
		apply     applyVersion
		update    bool // the object exists and the desired one differs
		fail      bool // the API server refuses the write
		wantEvent string
		wantErr   string
	}{
		"Gateway created": {apply: applyGatewayVersion,
			wantEvent: "Normal CreatedGateway Created Gateway for RayService ns/svc-gateway"},
		"Gateway create failed": {apply: applyGatewayVersion, fail: true,
			wantEvent: "Warning FailedToCreateGateway Failed to create Gateway for RayService ns/svc-gateway: boom",
			wantErr:   "creating Gateway ns/svc-gateway: boom"},
		"Gateway updated": {apply: applyGatewayVersion, update: true,
			wantEvent: "Normal UpdatedGateway Updated the Gateway ns/svc-gateway"},
		"Gateway update failed": {apply: applyGatewayVersion, update: true, fail: true,
			wantEvent: "Warning FailedToUpdateGateway Failed to update the Gateway ns/svc-gateway: boom",
			wantErr:   "updating Gateway ns/svc-gateway: boom"},
		"HTTPRoute created": {apply: applyRouteVersion,
			wantEvent: "Normal CreatedHTTPRoute Created HTTPRoute for RayService ns/svc-httproute"},
		"HTTPRoute create failed": {apply: applyRouteVersion, fail: true,
			wantEvent: "Warning FailedToCreateHTTPRoute Failed to create the HTTPRoute for RayService ns/svc-httproute: boom",
			wantErr:   "creating HTTPRoute ns/svc-httproute: boom"},
		"HTTPRoute updated": {apply: applyRouteVersion, update: true,
			wantEvent: "Normal UpdatedHTTPRoute Updated the HTTPRoute ns/svc-httproute"},
		"HTTPRoute update failed": {apply: applyRouteVersion, update: true, fail: true,
			wantEvent: "Warning FailedToUpdateHTTPRoute Failed to update the HTTPRoute ns/svc-httproute: boom",
			wantErr:   "updating HTTPRoute ns/svc-httproute: boom"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			fail := false
			e := newEnv(t, nil, withInterceptors(failingWrites(&fail)))
			s := newScope(incrementalService("new").Obj(), t0)
			version := 0
			if tc.update {
				if err := tc.apply(ctx, e.r, s, 0); err != nil {
					t.Fatal(err)
				}
				e.recordedEvents()
				version = 1
			}
			fail = tc.fail
			err := tc.apply(ctx, e.r, s, version)
			checkError(t, err, tc.wantErr)
			if got := e.recordedEvents(); !slices.Equal(got, []string{tc.wantEvent}) {
				t.Errorf("events %q, want %q", got, tc.wantEvent)
			}
			// Only a failed create leaves the scope without the object.
			if held, want := s.gateway != nil || s.route != nil, tc.update || !tc.fail; held != want {
				t.Errorf("the scope holds the object: %v, want %v", held, want)
			}
		})
	}
}

// failingWrites makes creates and updates fail with "boom" while *fail.
func failingWrites(fail *bool) interceptor.Funcs {
	boom := errors.New("boom")
	return interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if *fail {
				return boom
			}
			return c.Create(ctx, obj, opts...)
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			if *fail {
				return boom
			}
			return c.Update(ctx, obj, opts...)
		},
	}
}

func checkError(t *testing.T, err error, want string) {
	t.Helper()
	if (err == nil) != (want == "") || (err != nil && err.Error() != want) {
		t.Errorf("error %v, want %q", err, want)
	}
}
