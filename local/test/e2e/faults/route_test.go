package faults_test

import (
	"context"
	"fmt"
	"maps"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ray-operator/ray-operator/internal/incrementalupgrade"
	"github.com/ray-operator/ray-operator/internal/naming"
	"github.com/ray-operator/ray-operator/local/internal/e2eutil"
)

// routeStep is the weight of each backend Service of the RayService's
// HTTPRoute, as one look saw them.
type routeStep map[string]int32

// lookRoute reads the RayService's HTTPRoute, keeps its weights when they
// changed (the operator's work becoming visible), and notes the new
// cluster's weight.
func (o *upgradeObserver) lookRoute(ctx context.Context, green string) {
	if !o.incremental {
		return
	}
	route := &gwv1.HTTPRoute{}
	key := types.NamespacedName{Namespace: o.ns, Name: incrementalupgrade.HTTPRouteName(e2eutil.HelloName)}
	if err := o.s.Client.Get(ctx, key, route); err != nil {
		o.mu.Lock()
		o.last.routeErr = err
		o.mu.Unlock()
		return
	}
	step := routeStep{}
	for _, rule := range route.Spec.Rules {
		for _, b := range rule.BackendRefs {
			step[string(b.Name)] = ptr.Deref(b.Weight, 1)
		}
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.last.routeErr = nil
	if w, ok := step[naming.ServeServiceName(green)]; ok {
		o.last.greenWeight = w
	}
	if n := len(o.routeSteps); n > 0 && maps.Equal(o.routeSteps[n-1], step) {
		return
	}
	o.routeSteps = append(o.routeSteps, step)
	o.progress = append(o.progress, time.Now())
}

// steps returns the route's weights as seen, in order.
func (o *upgradeObserver) steps() []routeStep {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]routeStep(nil), o.routeSteps...)
}

// checkRouteForward fails t unless, across every kill, the new cluster's
// weight never went down nor the old one's up, and the last route sends
// the new cluster everything and the old one nothing.
func checkRouteForward(t *testing.T, steps []routeStep, blue, green string) {
	t.Helper()
	if len(steps) == 0 {
		t.Fatal("the HTTPRoute was never seen")
	}
	prevGreen, prevBlue := int32(0), int32(100)
	for i, s := range steps {
		g, b := s[naming.ServeServiceName(green)], s[naming.ServeServiceName(blue)]
		if g < prevGreen || b > prevBlue {
			t.Errorf("route step %d %v went back (new %d after %d, old %d after %d); steps %v", i, s, g, prevGreen, b, prevBlue, steps)
		}
		prevGreen, prevBlue = g, b
	}
	if last := steps[len(steps)-1]; last[naming.ServeServiceName(green)] != 100 || last[naming.ServeServiceName(blue)] != 0 {
		t.Errorf("last route %v; want %s at 100 and %s absent or 0", last, naming.ServeServiceName(green), naming.ServeServiceName(blue))
	}
}

// formatSteps is steps as old/new weight pairs, for the figures.
func formatSteps(steps []routeStep, blue, green string) string {
	out := ""
	for _, s := range steps {
		out += fmt.Sprintf(" %d/%d", s[naming.ServeServiceName(blue)], s[naming.ServeServiceName(green)])
	}
	return out
}
