package raycluster

import (
	"context"
	"slices"
	"testing"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// sweptPolicy is a NetworkPolicy in ns named name, labelled for cluster
// and by the operator, controlled by owner (kind/apiVersion/name) unless
// owner is empty.
func sweptPolicy(ns, name, cluster string, owner *metav1.OwnerReference) *networkingv1.NetworkPolicy {
	p := &networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{
		rayv1.LabelCluster: cluster, rayv1.LabelCreatedBy: rayv1.CreatedByOperator,
	}}}
	if owner != nil {
		p.OwnerReferences = []metav1.OwnerReference{*owner}
	}
	return p
}

func controllerRef(apiVersion, kind, name string) *metav1.OwnerReference {
	return &metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: name, UID: "u", Controller: ptr.To(true)}
}

func TestNetworkPolicySweep(t *testing.T) {
	rc := func(name string) *metav1.OwnerReference { return controllerRef("ray.io/v1", "RayCluster", name) }
	objects := []client.Object{
		sweptPolicy("a", "rc-head", "rc", rc("rc")),
		sweptPolicy("a", "rc-workers-small", "rc", rc("rc")),
		sweptPolicy("b", "rc-head", "rc", rc("rc")),                                         // not a watched namespace
		sweptPolicy("a", "rc-extra", "rc", rc("rc")),                                        // not a name the builder makes
		sweptPolicy("a", "x-head", "x", nil),                                                // no controller
		sweptPolicy("a", "y-head", "y", rc("other")),                                        // controlled by another cluster
		sweptPolicy("a", "z-head", "z", controllerRef("example.com/v1", "RayCluster", "z")), // another API group
		sweptPolicy("a", "j-head", "j", controllerRef("ray.io/v1", "RayJob", "j")),
	}
	unlabelled := sweptPolicy("a", "u-head", "u", rc("u"))
	delete(unlabelled.Labels, rayv1.LabelCreatedBy)
	objects = append(objects, unlabelled)

	listFailures := 2
	c := fakeClientBuilder(testScheme(t)).WithObjects(objects...).WithInterceptorFuncs(interceptor.Funcs{
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			if listFailures > 0 {
				listFailures--
				return apierrors.NewServiceUnavailable("starting")
			}
			return c.List(ctx, list, opts...)
		},
	}).Build()
	sweep := &networkPolicySweep{reader: c, writer: c, namespaces: []string{"a"},
		retry: wait.Backoff{Duration: time.Millisecond, Factor: 1, Steps: 5}}
	if err := sweep.Start(t.Context()); err != nil {
		t.Fatal(err)
	}

	var left networkingv1.NetworkPolicyList
	if err := c.List(t.Context(), &left); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range left.Items {
		got = append(got, p.Namespace+"/"+p.Name)
	}
	slices.Sort(got)
	want := []string{"a/j-head", "a/rc-extra", "a/u-head", "a/x-head", "a/y-head", "a/z-head", "b/rc-head"}
	if !slices.Equal(got, want) {
		t.Errorf("left after the sweep %v, want %v", got, want)
	}
	if listFailures != 0 {
		t.Errorf("%d failing lists not retried", listFailures)
	}
}

// TestNetworkPolicySweepForbidden: without RBAC for NetworkPolicies the
// sweep gives up at once and does not stop the operator.
func TestNetworkPolicySweepForbidden(t *testing.T) {
	lists := 0
	c := fakeClientBuilder(testScheme(t)).WithInterceptorFuncs(interceptor.Funcs{
		List: func(context.Context, client.WithWatch, client.ObjectList, ...client.ListOption) error {
			lists++
			return apierrors.NewForbidden(schema.GroupResource{Group: "networking.k8s.io", Resource: "networkpolicies"}, "", nil)
		},
	}).Build()
	sweep := &networkPolicySweep{reader: c, writer: c, retry: wait.Backoff{Duration: time.Millisecond, Factor: 1, Steps: 5}}
	if err := sweep.Start(t.Context()); err != nil {
		t.Fatalf("Start = %v, want nil", err)
	}
	if lists != 1 {
		t.Errorf("%d lists, want 1", lists)
	}
}
