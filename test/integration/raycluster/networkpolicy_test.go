package raycluster_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/component-base/featuregate"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/controller/raycluster"
	"github.com/ray-operator/ray-operator/internal/controller/rayjob"
	"github.com/ray-operator/ray-operator/internal/dashboard/dashboardtest"
	"github.com/ray-operator/ray-operator/internal/features"
	"github.com/ray-operator/ray-operator/internal/managerdeps"
	"github.com/ray-operator/ray-operator/internal/operator"
	"github.com/ray-operator/ray-operator/internal/raynetpol"
	"github.com/ray-operator/ray-operator/internal/testing/testenv"
)

// netpolWorld is a namespace with an operator whose RayClusterNetworkPolicy
// gate the test switches between starts (a gate changes only with a
// restart).
type netpolWorld struct {
	*world
	gateOn bool
}

// networkPolicyGate is a gate set with RayClusterNetworkPolicy on or off.
func networkPolicyGate(on bool) (featuregate.FeatureGate, error) {
	gate := features.NewGate()
	return gate, gate.SetFromMap(map[string]bool{string(features.RayClusterNetworkPolicy): on})
}

func newNetpolWorld(t *testing.T, gateOn bool) *netpolWorld {
	w := &netpolWorld{world: &world{World: testenv.NewWorld(t, testenv.Shared(t)), clock: clocktesting.NewFakeClock(time.Now())}, gateOn: gateOn}
	w.op = testenv.StartOperator(t, w.Env, operator.CacheOptions(w.NS), func(mgr manager.Manager) error {
		gate, err := networkPolicyGate(w.gateOn)
		if err != nil {
			return err
		}
		opts := raycluster.Options{Features: gate, WatchNamespaces: []string{w.NS}}
		return raycluster.NewForManager(mgr, raycluster.Deps{Core: managerdeps.Core{Clock: w.clock}}, opts).SetupWithManager(mgr, 1)
	})
	return w
}

// policyNames lists the namespace's NetworkPolicies, sorted.
func (w *netpolWorld) policyNames() []string {
	w.T.Helper()
	var list networkingv1.NetworkPolicyList
	w.List(&list)
	names := make([]string, 0, len(list.Items))
	for _, p := range list.Items {
		names = append(names, p.Name)
	}
	slices.Sort(names)
	return names
}

// waitPolicies waits until the namespace holds exactly names.
func (w *netpolWorld) waitPolicies(what string, names ...string) {
	w.T.Helper()
	slices.Sort(names)
	w.Eventually(what, func() (bool, error) { return slices.Equal(w.policyNames(), names), nil })
}

// waitBuilt waits until the policy called name is what the builder makes
// of the cluster as stored now, owned by it for garbage collection.
func (w *world) waitBuilt(cluster, name string) *networkingv1.NetworkPolicy {
	w.T.Helper()
	got := &networkingv1.NetworkPolicy{}
	w.Eventually("NetworkPolicy "+name+" as built", func() (bool, error) {
		rc := w.RayCluster(cluster)
		if rc == nil || !w.Get(name, got) {
			return false, nil
		}
		for _, want := range raynetpol.Build(rc) {
			if want.Name == name {
				return raynetpol.UpToDate(got, want) && cmp.Equal(want.OwnerReferences, got.OwnerReferences), nil
			}
		}
		return false, nil
	})
	return got
}

func dnsEgress() networkingv1.NetworkPolicyEgressRule {
	port := intstr.FromInt32(53)
	return networkingv1.NetworkPolicyEgressRule{
		To: []networkingv1.NetworkPolicyPeer{{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": "kube-system"}}}},
		// No protocol: the API server defaults it to TCP, which must not
		// look like a change on every pass.
		Ports: []networkingv1.NetworkPolicyPort{{Port: &port}},
	}
}

// userPolicy is a NetworkPolicy the user made, labelled with the cluster.
func userPolicy(ns, name, cluster string) *networkingv1.NetworkPolicy {
	return &networkingv1.NetworkPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{rayv1.LabelCluster: cluster}},
		Spec:       networkingv1.NetworkPolicySpec{PodSelector: metav1.LabelSelector{}, PolicyTypes: []networkingv1.PolicyType{"Ingress"}},
	}
}

// TestNetworkPolicyLifecycle follows one cluster's policies: created with
// the built spec and the cluster as controller owner (envtest runs no
// garbage collector, so the owner reference is what deletion with the
// cluster rests on), a group added and removed, the mode changed, a policy
// deleted by hand, and the field removed. A user's policy carrying the
// cluster's label is never touched.
func TestNetworkPolicyLifecycle(t *testing.T) {
	w := newNetpolWorld(t, true)
	w.Create(userPolicy(w.NS, "mine", "np"))
	rc := w.newCluster("np", group("small", 1))
	rc.Spec.NetworkPolicy = &rayv1.NetworkPolicyConfig{Worker: &rayv1.NetworkPolicyRules{EgressRules: []networkingv1.NetworkPolicyEgressRule{dnsEgress()}}}
	w.Create(rc)

	w.waitPolicies("head and small policies", "mine", "np-head", "np-workers-small")
	head := w.waitBuilt("np", "np-head")
	small := w.waitBuilt("np", "np-workers-small")
	stored := w.RayCluster("np")
	for _, p := range []*networkingv1.NetworkPolicy{head, small} {
		if owner := metav1.GetControllerOf(p); owner == nil || owner.UID != stored.UID || owner.Kind != "RayCluster" || !ptr.Deref(owner.BlockOwnerDeletion, false) {
			t.Errorf("%s controller = %+v, want the RayCluster %s blocking its deletion", p.Name, owner, stored.UID)
		}
	}
	if got := small.Spec.Egress[1].Ports[0].Protocol; got == nil || *got != corev1.ProtocolTCP {
		t.Errorf("user egress rule protocol = %v, want the API server's TCP", got)
	}
	w.WaitEvent("np", "CreatedNetworkPolicy")
	w.WaitPods("np", headLabels(), 1)

	w.edit("np", func(rc *rayv1.RayCluster) {
		rc.Spec.WorkerGroupSpecs = append(rc.Spec.WorkerGroupSpecs, group("gpu", 0))
	})
	w.waitPolicies("a policy for the added group", "mine", "np-head", "np-workers-small", "np-workers-gpu")
	w.waitBuilt("np", "np-workers-gpu")

	w.edit("np", func(rc *rayv1.RayCluster) { rc.Spec.WorkerGroupSpecs = rc.Spec.WorkerGroupSpecs[1:] })
	w.waitPolicies("the removed group's policy deleted", "mine", "np-head", "np-workers-gpu")
	w.WaitEvent("np", "DeletedNetworkPolicy")

	w.edit("np", func(rc *rayv1.RayCluster) {
		rc.Spec.NetworkPolicy = &rayv1.NetworkPolicyConfig{Mode: ptr.To(rayv1.NetworkPolicyDenyAllIngress)}
	})
	head = w.waitBuilt("np", "np-head")
	if !slices.Equal(head.Spec.PolicyTypes, []networkingv1.PolicyType{"Ingress"}) || head.Spec.Egress != nil {
		t.Errorf("DenyAllIngress head policy types %v egress %v, want Ingress only", head.Spec.PolicyTypes, head.Spec.Egress)
	}
	w.WaitEvent("np", "UpdatedNetworkPolicy")

	if err := w.Client.Delete(context.Background(), head); err != nil {
		t.Fatal(err)
	}
	w.Eventually("the head policy deleted by hand comes back", func() (bool, error) {
		got := &networkingv1.NetworkPolicy{}
		return w.Get("np-head", got) && got.UID != head.UID, nil
	})

	w.edit("np", func(rc *rayv1.RayCluster) { rc.Spec.NetworkPolicy = nil })
	w.waitPolicies("all of the cluster's policies deleted with the field, the user's kept", "mine")
}

// TestNetworkPolicyNameCollision: a user's policy under the head policy's
// name is reported and left alone, and the pass stops before the Pods.
func TestNetworkPolicyNameCollision(t *testing.T) {
	w := newNetpolWorld(t, true)
	w.Create(userPolicy(w.NS, "col-head", "someone-else"))
	rc := w.newCluster("col")
	rc.Spec.NetworkPolicy = &rayv1.NetworkPolicyConfig{}
	w.Create(rc)

	ev := w.WaitEvent("col", "NetworkPolicyNameCollision")
	if ev.Type != corev1.EventTypeWarning || ev.Note != "NetworkPolicy "+w.NS+"/col-head already exists and is not owned by this RayCluster, network isolation will not be applied. "+
		"Rename the existing NetworkPolicy or use a different RayCluster name to avoid the collision" {
		t.Errorf("event %s %q", ev.Type, ev.Note)
	}
	got := &networkingv1.NetworkPolicy{}
	w.Get("col-head", got)
	if len(got.OwnerReferences) != 0 || got.Labels[rayv1.LabelCluster] != "someone-else" {
		t.Errorf("the user's policy was changed: owners %v labels %v", got.OwnerReferences, got.Labels)
	}
	if pods := w.Pods("col", nil); len(pods) != 0 {
		t.Errorf("%d Pods created without their isolation", len(pods))
	}
}

// TestNetworkPolicyGateOff: with the gate off spec.networkPolicy is refused
// with KubeRay's message and nothing is created; restarting a live
// operator with the gate off removes the policies it made, and only those.
func TestNetworkPolicyGateOff(t *testing.T) {
	w := newNetpolWorld(t, true)
	rc := w.newCluster("live", group("small", 0))
	rc.Spec.NetworkPolicy = &rayv1.NetworkPolicyConfig{}
	w.Create(rc)
	w.waitPolicies("the live cluster's policies", "live-head", "live-workers-small")
	// Looks like the operator's, but no RayCluster controls it.
	lookalike := userPolicy(w.NS, "other-head", "other")
	lookalike.Labels[rayv1.LabelCreatedBy] = rayv1.CreatedByOperator
	w.Create(lookalike)

	w.gateOn = false
	w.op.Restart()
	w.waitPolicies("the operator's policies removed at the gate-off start", "other-head")

	refused := w.newCluster("off")
	refused.Spec.NetworkPolicy = &rayv1.NetworkPolicyConfig{}
	w.Create(refused)
	got := w.waitStatus("off", "validation failed", func(s *rayv1.RayClusterStatus) bool {
		return meta.IsStatusConditionTrue(s.Conditions, string(rayv1.RayClusterValidationFailed))
	})
	cond := meta.FindStatusCondition(got.Status.Conditions, string(rayv1.RayClusterValidationFailed))
	if cond.Message != "spec.networkPolicy requires the RayClusterNetworkPolicy feature gate to be enabled" {
		t.Errorf("condition message %q", cond.Message)
	}
	// The refusal ends the pass before any step: nothing was created.
	for _, name := range []string{"off-head", "live-head"} {
		if err := w.Client.Get(context.Background(), client.ObjectKey{Namespace: w.NS, Name: name}, &networkingv1.NetworkPolicy{}); !apierrors.IsNotFound(err) {
			t.Errorf("NetworkPolicy %s with the gate off: %v", name, err)
		}
	}
}

// TestNetworkPolicyAdmitsK8sJobModeSubmitter runs the RayJob controller
// too: the cluster of a K8sJobMode RayJob gets the head rule admitting the
// submitter on the dashboard port, and the submitter Pod the RayJob
// controller makes matches that rule's selector.
func TestNetworkPolicyAdmitsK8sJobModeSubmitter(t *testing.T) {
	w := &world{World: testenv.NewWorld(t, testenv.Shared(t)), clock: clocktesting.NewFakeClock(time.Now())}
	dash := dashboardtest.NewFake()
	w.op = testenv.StartOperator(t, w.Env, operator.CacheOptions(w.NS), func(mgr manager.Manager) error {
		gate, err := networkPolicyGate(true)
		if err != nil {
			return err
		}
		if err := raycluster.NewForManager(mgr, raycluster.Deps{Core: managerdeps.Core{Clock: w.clock}}, raycluster.Options{Features: gate, WatchNamespaces: []string{w.NS}}).SetupWithManager(mgr, 1); err != nil {
			return err
		}
		opts := rayjob.Options{TransitionGracePeriod: 300 * time.Second, Features: gate, ClusterDomain: "cluster.local"}
		return rayjob.NewForManager(mgr, rayjob.Deps{Core: managerdeps.Core{Clock: w.clock}, Dashboards: dash.Provider()}, opts).SetupWithManager(mgr, 1)
	})
	spec := clusterSpec().Obj()
	spec.NetworkPolicy = &rayv1.NetworkPolicyConfig{}
	w.Create(&rayv1.RayJob{
		ObjectMeta: metav1.ObjectMeta{Name: "sub", Namespace: w.NS},
		Spec:       rayv1.RayJobSpec{Entrypoint: "python -c 'print(1)'", SubmissionMode: rayv1.K8sJobMode, RayClusterSpec: spec},
	})
	cluster := w.RayJobCluster("sub")
	head := w.waitBuilt(cluster.Name, raynetpol.HeadName(cluster.Name))
	tcp := corev1.ProtocolTCP
	dashboardPort := intstr.FromInt32(8265)
	wantRule := networkingv1.NetworkPolicyIngressRule{
		From: []networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{
			"ray.io/originated-from-cr-name": "sub", "ray.io/originated-from-crd": "RayJob",
		}}}},
		Ports: []networkingv1.NetworkPolicyPort{{Protocol: &tcp, Port: &dashboardPort}},
	}
	if len(head.Spec.Ingress) != 2 {
		t.Fatalf("head ingress rules %v, want the intra-cluster and the submitter rule", head.Spec.Ingress)
	}
	if diff := cmp.Diff(wantRule, head.Spec.Ingress[1]); diff != "" {
		t.Errorf("submitter rule (-want +got):\n%s", diff)
	}

	w.RunPods(cluster.Name, 1)
	submitter := &batchv1.Job{}
	w.Eventually("the submitter Job", func() (bool, error) { return w.Get("sub", submitter), nil })
	selector, err := metav1.LabelSelectorAsSelector(head.Spec.Ingress[1].From[0].PodSelector)
	if err != nil {
		t.Fatal(err)
	}
	if !selector.Matches(labels.Set(submitter.Spec.Template.Labels)) {
		t.Errorf("submitter Pod labels %v do not match the head policy's %v", submitter.Spec.Template.Labels, selector)
	}
}
