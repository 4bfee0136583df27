package incrementalupgrade

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

var testRS = &rayv1.RayService{ObjectMeta: metav1.ObjectMeta{Name: "svc", Namespace: "ns"}}

func TestGateway(t *testing.T) {
	gw := Gateway(testRS, Options{GatewayClassName: "istio"})
	want := gwv1.GatewaySpec{
		GatewayClassName: "istio",
		Listeners:        []gwv1.Listener{{Name: "http", Protocol: gwv1.HTTPProtocolType, Port: 80}},
	}
	if gw.Name != "svc-gateway" || gw.Namespace != "ns" {
		t.Errorf("Gateway %s/%s", gw.Namespace, gw.Name)
	}
	if diff := cmp.Diff(want, gw.Spec); diff != "" {
		t.Errorf("Gateway spec (-want +got):\n%s", diff)
	}
}

func TestGatewayDiffers(t *testing.T) {
	desired := Gateway(testRS, Options{GatewayClassName: "istio"})
	defaulted := desired.DeepCopy()
	defaulted.Spec.Listeners[0].AllowedRoutes = &gwv1.AllowedRoutes{Namespaces: &gwv1.RouteNamespaces{From: ptr.To(gwv1.NamespacesFromSame)}}
	if GatewayDiffers(defaulted, desired) {
		t.Error("a Gateway with API-server defaults differs")
	}
	otherClass := Gateway(testRS, Options{GatewayClassName: "envoy"})
	if !GatewayDiffers(otherClass, desired) {
		t.Error("another class does not differ")
	}
	otherPort := desired.DeepCopy()
	otherPort.Spec.Listeners[0].Port = 8080
	if !GatewayDiffers(otherPort, desired) {
		t.Error("another listener port does not differ")
	}
	extra := desired.DeepCopy()
	extra.Spec.Listeners = append(extra.Spec.Listeners, gwv1.Listener{Name: "https", Protocol: gwv1.HTTPSProtocolType, Port: 443})
	if !GatewayDiffers(extra, desired) {
		t.Error("an extra listener does not differ")
	}
}

func TestHTTPRoute(t *testing.T) {
	route := HTTPRoute(testRS, []Backend{{Service: "svc-a-serve-svc", Port: 8000, Weight: 70}, {Service: "svc-b-serve-svc", Port: 9000, Weight: 30}})
	if route.Name != "svc-httproute" || route.Namespace != "ns" {
		t.Errorf("HTTPRoute %s/%s", route.Namespace, route.Name)
	}
	parents := route.Spec.ParentRefs
	if len(parents) != 1 || parents[0].Name != "svc-gateway" || ptr.Deref(parents[0].Namespace, "") != "ns" {
		t.Errorf("parentRefs %+v", parents)
	}
	if len(route.Spec.Rules) != 1 {
		t.Fatalf("rules %+v", route.Spec.Rules)
	}
	rule := route.Spec.Rules[0]
	if m := rule.Matches; len(m) != 1 || *m[0].Path.Type != gwv1.PathMatchPathPrefix || *m[0].Path.Value != "/" {
		t.Errorf("matches %+v", m)
	}
	type backend struct {
		name, ns   string
		port, wght int32
	}
	var got []backend
	for _, b := range rule.BackendRefs {
		got = append(got, backend{string(b.Name), string(*b.Namespace), *b.Port, *b.Weight})
	}
	want := []backend{{"svc-a-serve-svc", "ns", 8000, 70}, {"svc-b-serve-svc", "ns", 9000, 30}}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(backend{})); diff != "" {
		t.Errorf("backends (-want +got):\n%s", diff)
	}
	if w := Weight(route, "svc-b-serve-svc"); w == nil || *w != 30 {
		t.Errorf("Weight of b = %v", w)
	}
	if w := Weight(route, "svc-c-serve-svc"); w != nil {
		t.Errorf("Weight of a missing backend = %v", *w)
	}
	if w := Weight(nil, "svc-a-serve-svc"); w != nil {
		t.Errorf("Weight without a route = %v", *w)
	}
}

func TestRouteDiffers(t *testing.T) {
	desired := HTTPRoute(testRS, []Backend{{Service: "a", Port: 8000, Weight: 100}})
	if RouteDiffers(desired.DeepCopy(), desired) {
		t.Error("an equal route differs")
	}
	stripped := desired.DeepCopy()
	stripped.Spec.ParentRefs[0].Group, stripped.Spec.ParentRefs[0].Kind = nil, nil
	stripped.Spec.Rules[0].BackendRefs[0].Group, stripped.Spec.Rules[0].BackendRefs[0].Kind = nil, nil
	if RouteDiffers(stripped, desired) {
		t.Error("group and kind left to defaults differ")
	}
	for name, mutate := range map[string]func(*gwv1.HTTPRoute){
		"weight":  func(r *gwv1.HTTPRoute) { r.Spec.Rules[0].BackendRefs[0].Weight = ptr.To[int32](90) },
		"port":    func(r *gwv1.HTTPRoute) { r.Spec.Rules[0].BackendRefs[0].Port = ptr.To[int32](9000) },
		"backend": func(r *gwv1.HTTPRoute) { r.Spec.Rules[0].BackendRefs[0].Name = "b" },
		"added backend": func(r *gwv1.HTTPRoute) {
			r.Spec.Rules[0].BackendRefs = append(r.Spec.Rules[0].BackendRefs, r.Spec.Rules[0].BackendRefs[0])
		},
		"parent": func(r *gwv1.HTTPRoute) { r.Spec.ParentRefs[0].Name = "other" },
		"path":   func(r *gwv1.HTTPRoute) { r.Spec.Rules[0].Matches[0].Path.Value = ptr.To("/x") },
		"rules":  func(r *gwv1.HTTPRoute) { r.Spec.Rules = append(r.Spec.Rules, r.Spec.Rules[0]) },
	} {
		current := desired.DeepCopy()
		mutate(current)
		if !RouteDiffers(current, desired) {
			t.Errorf("a changed %s does not differ", name)
		}
	}
}

func cond(t string, s metav1.ConditionStatus) metav1.Condition {
	return metav1.Condition{Type: t, Status: s, Reason: "Test"}
}

func TestGatewayReady(t *testing.T) {
	gw := Gateway(testRS, Options{GatewayClassName: "istio"})
	if GatewayReady(gw) || GatewayReady(nil) {
		t.Error("a Gateway without status is ready")
	}
	gw.Status.Conditions = []metav1.Condition{cond("Accepted", metav1.ConditionTrue)}
	if GatewayReady(gw) {
		t.Error("an accepted but unprogrammed Gateway is ready")
	}
	gw.Status.Conditions = append(gw.Status.Conditions, cond("Programmed", metav1.ConditionTrue))
	if !GatewayReady(gw) {
		t.Error("an accepted and programmed Gateway is not ready")
	}
}

// seen is c as written by a gateway controller that saw generation g of
// the route.
func seen(c metav1.Condition, g int64) metav1.Condition {
	c.ObservedGeneration = g
	return c
}

func TestRouteReady(t *testing.T) {
	gw := Gateway(testRS, Options{GatewayClassName: "istio"})
	route := HTTPRoute(testRS, []Backend{{Service: "a", Port: 8000, Weight: 100}})
	parentStatus := func(name string, conds ...metav1.Condition) gwv1.RouteParentStatus {
		return gwv1.RouteParentStatus{ParentRef: gwv1.ParentReference{Name: gwv1.ObjectName(name)}, ControllerName: "example.com/gw", Conditions: conds}
	}
	accepted, resolved := cond("Accepted", metav1.ConditionTrue), cond("ResolvedRefs", metav1.ConditionTrue)
	for name, tc := range map[string]struct {
		parents []gwv1.RouteParentStatus
		want    bool
	}{
		"no status":                 {nil, false},
		"accepted, resolved":        {[]gwv1.RouteParentStatus{parentStatus("svc-gateway", accepted, resolved)}, true},
		"refs not resolved":         {[]gwv1.RouteParentStatus{parentStatus("svc-gateway", accepted, cond("ResolvedRefs", metav1.ConditionFalse))}, false},
		"not accepted":              {[]gwv1.RouteParentStatus{parentStatus("svc-gateway", resolved)}, false},
		"another parent only":       {[]gwv1.RouteParentStatus{parentStatus("other-gateway", accepted, resolved)}, false},
		"generation 3 seen":         {[]gwv1.RouteParentStatus{parentStatus("svc-gateway", seen(accepted, 3), seen(resolved, 3))}, true},
		"generation 4 seen":         {[]gwv1.RouteParentStatus{parentStatus("svc-gateway", seen(accepted, 4), seen(resolved, 4))}, true},
		"accepted for generation 2": {[]gwv1.RouteParentStatus{parentStatus("svc-gateway", seen(accepted, 2), seen(resolved, 3))}, false},
		"resolved for generation 2": {[]gwv1.RouteParentStatus{parentStatus("svc-gateway", seen(accepted, 3), seen(resolved, 2))}, false},
	} {
		t.Run(name, func(t *testing.T) {
			r := route.DeepCopy()
			r.Generation = 3
			r.Status.Parents = tc.parents
			if got := RouteReady(r, gw); got != tc.want {
				t.Errorf("RouteReady = %v, want %v", got, tc.want)
			}
		})
	}
}
