package incrementalupgrade

import (
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// The Gateway's single listener, as KubeRay names it.
const (
	ListenerName          = "http"
	ListenerPort    int32 = 80
	routePathPrefix       = "/"
)

// GatewayName and HTTPRouteName name a RayService's Gateway API objects.
func GatewayName(rayServiceName string) string   { return rayServiceName + "-gateway" }
func HTTPRouteName(rayServiceName string) string { return rayServiceName + "-httproute" }

// Gateway is the Gateway of a RayService: the class of its options and one
// HTTP listener on port 80. Its owner reference is the caller's.
func Gateway(rs *rayv1.RayService, opts Options) *gwv1.Gateway {
	return &gwv1.Gateway{
		ObjectMeta: metav1.ObjectMeta{Name: GatewayName(rs.Name), Namespace: rs.Namespace},
		Spec: gwv1.GatewaySpec{
			GatewayClassName: gwv1.ObjectName(opts.GatewayClassName),
			Listeners: []gwv1.Listener{{
				Name: gwv1.SectionName(ListenerName), Protocol: gwv1.HTTPProtocolType, Port: ListenerPort,
			}},
		},
	}
}

// GatewayDiffers reports whether an existing Gateway's class or listeners
// (name, protocol, port) differ from the desired ones; fields the API
// server defaults are not compared.
func GatewayDiffers(current, desired *gwv1.Gateway) bool {
	if current.Spec.GatewayClassName != desired.Spec.GatewayClassName {
		return true
	}
	key := func(l gwv1.Listener) listenerKey { return listenerKey{l.Name, l.Protocol, l.Port} }
	return !slices.Equal(mapSlice(current.Spec.Listeners, key), mapSlice(desired.Spec.Listeners, key))
}

type listenerKey struct {
	name     gwv1.SectionName
	protocol gwv1.ProtocolType
	port     gwv1.PortNumber
}

// Backend is one weighted backend of the HTTPRoute: a cluster's serve
// Service and port.
type Backend struct {
	Service string
	Port    int32
	Weight  int32
}

// HTTPRoute is the HTTPRoute of a RayService: attached to its Gateway, one
// rule for every path, and the given backends in order (the active
// cluster's, then the pending cluster's). The API server's defaults for
// group, kind and match are written out, so a stored route compares equal.
func HTTPRoute(rs *rayv1.RayService, backends []Backend) *gwv1.HTTPRoute {
	ns := gwv1.Namespace(rs.Namespace)
	refs := make([]gwv1.HTTPBackendRef, 0, len(backends))
	for _, b := range backends {
		refs = append(refs, gwv1.HTTPBackendRef{BackendRef: gwv1.BackendRef{
			BackendObjectReference: gwv1.BackendObjectReference{
				Group: ptr.To(gwv1.Group("")), Kind: ptr.To(gwv1.Kind("Service")),
				Name: gwv1.ObjectName(b.Service), Namespace: ptr.To(ns), Port: ptr.To(b.Port),
			},
			Weight: ptr.To(b.Weight),
		}})
	}
	return &gwv1.HTTPRoute{
		ObjectMeta: metav1.ObjectMeta{Name: HTTPRouteName(rs.Name), Namespace: rs.Namespace},
		Spec: gwv1.HTTPRouteSpec{
			CommonRouteSpec: gwv1.CommonRouteSpec{ParentRefs: []gwv1.ParentReference{{
				Group: ptr.To(gwv1.Group(gwv1.GroupName)), Kind: ptr.To(gwv1.Kind("Gateway")),
				Name: gwv1.ObjectName(GatewayName(rs.Name)), Namespace: ptr.To(ns),
			}}},
			Rules: []gwv1.HTTPRouteRule{{
				Matches: []gwv1.HTTPRouteMatch{{Path: &gwv1.HTTPPathMatch{
					Type: ptr.To(gwv1.PathMatchPathPrefix), Value: ptr.To(routePathPrefix),
				}}},
				BackendRefs: refs,
			}},
		},
	}
}

// RouteDiffers reports whether an existing HTTPRoute's parents, matches or
// weighted backends differ from the desired ones.
func RouteDiffers(current, desired *gwv1.HTTPRoute) bool {
	parent := func(p gwv1.ParentReference) parentKey { return parentKey{p.Name, ptr.Deref(p.Namespace, "")} }
	if !slices.Equal(mapSlice(current.Spec.ParentRefs, parent), mapSlice(desired.Spec.ParentRefs, parent)) {
		return true
	}
	if len(current.Spec.Rules) != len(desired.Spec.Rules) {
		return true
	}
	for i := range desired.Spec.Rules {
		if ruleDiffers(&current.Spec.Rules[i], &desired.Spec.Rules[i]) {
			return true
		}
	}
	return false
}

type parentKey struct {
	name      gwv1.ObjectName
	namespace gwv1.Namespace
}

type backendKey struct {
	name      gwv1.ObjectName
	namespace gwv1.Namespace
	port      gwv1.PortNumber
	weight    int32
}

type matchKey struct {
	pathType gwv1.PathMatchType
	value    string
}

func ruleDiffers(current, desired *gwv1.HTTPRouteRule) bool {
	backend := func(b gwv1.HTTPBackendRef) backendKey {
		return backendKey{b.Name, ptr.Deref(b.Namespace, ""), ptr.Deref(b.Port, 0), ptr.Deref(b.Weight, 1)}
	}
	match := func(m gwv1.HTTPRouteMatch) matchKey {
		if m.Path == nil {
			return matchKey{}
		}
		return matchKey{ptr.Deref(m.Path.Type, ""), ptr.Deref(m.Path.Value, "")}
	}
	return !slices.Equal(mapSlice(current.BackendRefs, backend), mapSlice(desired.BackendRefs, backend)) ||
		!slices.Equal(mapSlice(current.Matches, match), mapSlice(desired.Matches, match))
}

// Weight is the weight an HTTPRoute gives a backend Service, nil when the
// route does not name it.
func Weight(route *gwv1.HTTPRoute, service string) *int32 {
	if route == nil {
		return nil
	}
	for _, rule := range route.Spec.Rules {
		for _, b := range rule.BackendRefs {
			if string(b.Name) == service {
				return ptr.To(ptr.Deref(b.Weight, 1))
			}
		}
	}
	return nil
}

// GatewayReady reports whether a gateway controller accepted and
// programmed the Gateway.
func GatewayReady(gw *gwv1.Gateway) bool {
	return gw != nil &&
		meta.IsStatusConditionTrue(gw.Status.Conditions, string(gwv1.GatewayConditionAccepted)) &&
		meta.IsStatusConditionTrue(gw.Status.Conditions, string(gwv1.GatewayConditionProgrammed))
}

// RouteReady reports whether the route's status for the Gateway gw says it
// is accepted and all its backends resolve, for the route's current
// generation when the gateway controller records which one it saw (a
// controller that has not yet seen the route's last weights still routes
// by the ones before).
func RouteReady(route *gwv1.HTTPRoute, gw *gwv1.Gateway) bool {
	if route == nil || gw == nil {
		return false
	}
	for _, p := range route.Status.Parents {
		if string(p.ParentRef.Name) != gw.Name || string(ptr.Deref(p.ParentRef.Namespace, gwv1.Namespace(route.Namespace))) != gw.Namespace {
			continue
		}
		return conditionCurrent(p.Conditions, gwv1.RouteConditionAccepted, route.Generation) &&
			conditionCurrent(p.Conditions, gwv1.RouteConditionResolvedRefs, route.Generation)
	}
	return false
}

// conditionCurrent reports whether a condition is true and, when it names
// the generation it was written for, written for generation or a later one.
func conditionCurrent(conditions []metav1.Condition, t gwv1.RouteConditionType, generation int64) bool {
	c := meta.FindStatusCondition(conditions, string(t))
	return c != nil && c.Status == metav1.ConditionTrue && (c.ObservedGeneration == 0 || c.ObservedGeneration >= generation)
}

func mapSlice[T, K any](in []T, f func(T) K) []K {
	out := make([]K, 0, len(in))
	for _, v := range in {
		out = append(out, f(v))
	}
	return out
}
