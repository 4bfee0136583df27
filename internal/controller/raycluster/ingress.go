package raycluster

import (
	"context"

	"github.com/ray-operator/ray-operator/internal/passsteps"
	"github.com/ray-operator/ray-operator/internal/rayingress"
)

// reconcileIngress exposes the dashboard when headGroupSpec.enableIngress is
// set: with an OpenShift Route on OpenShift, otherwise with an Ingress.
func (r *Reconciler) reconcileIngress(ctx context.Context, s *scope) (passsteps.Result, error) {
	enable := s.cluster.Spec.HeadGroupSpec.EnableIngress
	if enable == nil || !*enable {
		return passsteps.Result{}, nil
	}
	if r.opts.UseRoute {
		return passsteps.Result{}, r.ensureExists(ctx, s, rayingress.BuildRoute(s.cluster), childEvents{"route", reasonCreatedRoute, reasonFailedToCreateRoute})
	}
	return passsteps.Result{}, r.ensureExists(ctx, s, rayingress.BuildIngress(s.cluster), childEvents{"ingress", reasonCreatedIngress, reasonFailedToCreateIngress})
}
