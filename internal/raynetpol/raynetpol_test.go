package raynetpol

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// The facts below are KubeRay's (networkpolicy_controller.go at feeaf72),
// written out as literals so that a changed constant fails here.

func newCluster(np *rayv1.NetworkPolicyConfig, groups ...string) *rayv1.RayCluster {
	c := &rayv1.RayCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "rc", Namespace: "ns", UID: "uid-1"},
		Spec:       rayv1.RayClusterSpec{NetworkPolicy: np},
	}
	for _, g := range groups {
		c.Spec.WorkerGroupSpecs = append(c.Spec.WorkerGroupSpecs, rayv1.WorkerGroupSpec{GroupName: g})
	}
	return c
}

// ownedByRayJob makes c the cluster of RayJob "job" submitted in mode.
func ownedByRayJob(c *rayv1.RayCluster, mode rayv1.JobSubmissionMode) *rayv1.RayCluster {
	c.Labels = map[string]string{"ray.io/job-submission-mode": string(mode)}
	c.OwnerReferences = []metav1.OwnerReference{{APIVersion: "ray.io/v1", Kind: "RayJob", Name: "job", UID: "job-uid", Controller: ptr.To(true)}}
	return c
}

func wantMeta(name, group string) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name: name, Namespace: "ns",
		Labels: map[string]string{
			"ray.io/cluster": "rc", "ray.io/group": group,
			"app.kubernetes.io/name": "kuberay", "app.kubernetes.io/created-by": "kuberay-operator",
		},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "ray.io/v1", Kind: "RayCluster", Name: "rc", UID: "uid-1",
			Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}},
	}
}

func clusterPeers() []networkingv1.NetworkPolicyPeer {
	return []networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"ray.io/cluster": "rc"}}}}
}

var (
	intraIngress = networkingv1.NetworkPolicyIngressRule{From: clusterPeers()}
	intraEgress  = networkingv1.NetworkPolicyEgressRule{To: clusterPeers()}
	headSelector = metav1.LabelSelector{MatchLabels: map[string]string{"ray.io/cluster": "rc", "ray.io/node-type": "head"}}
	both         = []networkingv1.PolicyType{"Ingress", "Egress"}
)

func groupSelector(g string) metav1.LabelSelector {
	return metav1.LabelSelector{MatchLabels: map[string]string{"ray.io/cluster": "rc", "ray.io/node-type": "worker", "ray.io/group": g}}
}

func tcpPort(p int32) networkingv1.NetworkPolicyPort {
	port := intstr.FromInt32(p)
	return networkingv1.NetworkPolicyPort{Protocol: ptr.To(corev1.ProtocolTCP), Port: &port}
}

// dnsEgress is the rule the deny-all sample adds: the operator adds none.
func dnsEgress() networkingv1.NetworkPolicyEgressRule {
	udp53, tcp53 := intstr.FromInt32(53), intstr.FromInt32(53)
	return networkingv1.NetworkPolicyEgressRule{
		To: []networkingv1.NetworkPolicyPeer{{
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": "kube-system"}},
			PodSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{"k8s-app": "kube-dns"}},
		}},
		Ports: []networkingv1.NetworkPolicyPort{{Protocol: ptr.To(corev1.ProtocolUDP), Port: &udp53}, {Protocol: ptr.To(corev1.ProtocolTCP), Port: &tcp53}},
	}
}

func portIngress(p int32) networkingv1.NetworkPolicyIngressRule {
	return networkingv1.NetworkPolicyIngressRule{Ports: []networkingv1.NetworkPolicyPort{tcpPort(p)}}
}

func submitterIngress(port int32) networkingv1.NetworkPolicyIngressRule {
	return networkingv1.NetworkPolicyIngressRule{
		From: []networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{
			"ray.io/originated-from-cr-name": "job", "ray.io/originated-from-crd": "RayJob",
		}}}},
		Ports: []networkingv1.NetworkPolicyPort{tcpPort(port)},
	}
}

func headPolicy(s networkingv1.NetworkPolicySpec) *networkingv1.NetworkPolicy {
	s.PodSelector = headSelector
	return &networkingv1.NetworkPolicy{ObjectMeta: wantMeta("rc-head", "headgroup"), Spec: s}
}

func groupPolicy(g string, s networkingv1.NetworkPolicySpec) *networkingv1.NetworkPolicy {
	s.PodSelector = groupSelector(g)
	return &networkingv1.NetworkPolicy{ObjectMeta: wantMeta("rc-workers-"+g, g), Spec: s}
}

func TestBuild(t *testing.T) {
	tests := map[string]struct {
		cluster *rayv1.RayCluster
		want    []*networkingv1.NetworkPolicy
	}{
		"no networkPolicy: no policies": {cluster: newCluster(nil, "small")},
		"DenyAll by default: both directions, intra-cluster only, no DNS, one policy per group": {
			cluster: newCluster(&rayv1.NetworkPolicyConfig{}, "small", "gpu"),
			want: []*networkingv1.NetworkPolicy{
				headPolicy(networkingv1.NetworkPolicySpec{PolicyTypes: both, Ingress: []networkingv1.NetworkPolicyIngressRule{intraIngress}, Egress: []networkingv1.NetworkPolicyEgressRule{intraEgress}}),
				groupPolicy("small", networkingv1.NetworkPolicySpec{PolicyTypes: both, Ingress: []networkingv1.NetworkPolicyIngressRule{intraIngress}, Egress: []networkingv1.NetworkPolicyEgressRule{intraEgress}}),
				groupPolicy("gpu", networkingv1.NetworkPolicySpec{PolicyTypes: both, Ingress: []networkingv1.NetworkPolicyIngressRule{intraIngress}, Egress: []networkingv1.NetworkPolicyEgressRule{intraEgress}}),
			},
		},
		"DenyAllIngress: no egress type or rules, user egress would be refused by validation": {
			cluster: newCluster(&rayv1.NetworkPolicyConfig{Mode: ptr.To(rayv1.NetworkPolicyDenyAllIngress),
				Head: &rayv1.NetworkPolicyRules{IngressRules: []networkingv1.NetworkPolicyIngressRule{portIngress(8080)}}}, "small"),
			want: []*networkingv1.NetworkPolicy{
				headPolicy(networkingv1.NetworkPolicySpec{PolicyTypes: []networkingv1.PolicyType{"Ingress"}, Ingress: []networkingv1.NetworkPolicyIngressRule{intraIngress, portIngress(8080)}}),
				groupPolicy("small", networkingv1.NetworkPolicySpec{PolicyTypes: []networkingv1.PolicyType{"Ingress"}, Ingress: []networkingv1.NetworkPolicyIngressRule{intraIngress}}),
			},
		},
		"DenyAllEgress: no ingress type or rules": {
			cluster: newCluster(&rayv1.NetworkPolicyConfig{Mode: ptr.To(rayv1.NetworkPolicyDenyAllEgress),
				Worker: &rayv1.NetworkPolicyRules{EgressRules: []networkingv1.NetworkPolicyEgressRule{dnsEgress()}}}, "small"),
			want: []*networkingv1.NetworkPolicy{
				headPolicy(networkingv1.NetworkPolicySpec{PolicyTypes: []networkingv1.PolicyType{"Egress"}, Egress: []networkingv1.NetworkPolicyEgressRule{intraEgress}}),
				groupPolicy("small", networkingv1.NetworkPolicySpec{PolicyTypes: []networkingv1.PolicyType{"Egress"}, Egress: []networkingv1.NetworkPolicyEgressRule{intraEgress, dnsEgress()}}),
			},
		},
		"user rules appended after the base ones; head and worker rules stay apart; a group entry replaces worker rules": {
			cluster: newCluster(&rayv1.NetworkPolicyConfig{
				Head:   &rayv1.NetworkPolicyRules{IngressRules: []networkingv1.NetworkPolicyIngressRule{portIngress(8080)}, EgressRules: []networkingv1.NetworkPolicyEgressRule{dnsEgress()}},
				Worker: &rayv1.NetworkPolicyRules{IngressRules: []networkingv1.NetworkPolicyIngressRule{portIngress(9999)}, EgressRules: []networkingv1.NetworkPolicyEgressRule{dnsEgress()}},
				WorkerGroups: []rayv1.WorkerGroupNetworkPolicyRules{{GroupName: "gpu",
					NetworkPolicyRules: rayv1.NetworkPolicyRules{IngressRules: []networkingv1.NetworkPolicyIngressRule{portIngress(7777)}}}},
			}, "small", "gpu"),
			want: []*networkingv1.NetworkPolicy{
				headPolicy(networkingv1.NetworkPolicySpec{PolicyTypes: both,
					Ingress: []networkingv1.NetworkPolicyIngressRule{intraIngress, portIngress(8080)}, Egress: []networkingv1.NetworkPolicyEgressRule{intraEgress, dnsEgress()}}),
				groupPolicy("small", networkingv1.NetworkPolicySpec{PolicyTypes: both,
					Ingress: []networkingv1.NetworkPolicyIngressRule{intraIngress, portIngress(9999)}, Egress: []networkingv1.NetworkPolicyEgressRule{intraEgress, dnsEgress()}}),
				groupPolicy("gpu", networkingv1.NetworkPolicySpec{PolicyTypes: both,
					Ingress: []networkingv1.NetworkPolicyIngressRule{intraIngress, portIngress(7777)}, Egress: []networkingv1.NetworkPolicyEgressRule{intraEgress}}),
			},
		},
		"K8sJobMode RayJob cluster: its submitter is admitted to the dashboard port of the head only": {
			cluster: ownedByRayJob(newCluster(&rayv1.NetworkPolicyConfig{}, "small"), rayv1.K8sJobMode),
			want: []*networkingv1.NetworkPolicy{
				headPolicy(networkingv1.NetworkPolicySpec{PolicyTypes: both, Ingress: []networkingv1.NetworkPolicyIngressRule{intraIngress, submitterIngress(8265)}, Egress: []networkingv1.NetworkPolicyEgressRule{intraEgress}}),
				groupPolicy("small", networkingv1.NetworkPolicySpec{PolicyTypes: both, Ingress: []networkingv1.NetworkPolicyIngressRule{intraIngress}, Egress: []networkingv1.NetworkPolicyEgressRule{intraEgress}}),
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Build(tc.cluster)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestSubmitterRule covers when the head admits a RayJob's submitter, and
// on which port.
func TestSubmitterRule(t *testing.T) {
	tests := map[string]struct {
		cluster *rayv1.RayCluster
		want    []networkingv1.NetworkPolicyIngressRule
	}{
		"K8sJobMode, default dashboard port 8265": {
			cluster: ownedByRayJob(newCluster(&rayv1.NetworkPolicyConfig{}), rayv1.K8sJobMode),
			want:    []networkingv1.NetworkPolicyIngressRule{intraIngress, submitterIngress(8265)},
		},
		"K8sJobMode, dashboard-port from rayStartParams": {
			cluster: func() *rayv1.RayCluster {
				c := ownedByRayJob(newCluster(&rayv1.NetworkPolicyConfig{}), rayv1.K8sJobMode)
				c.Spec.HeadGroupSpec.RayStartParams = map[string]string{"dashboard-port": "9265"}
				return c
			}(),
			want: []networkingv1.NetworkPolicyIngressRule{intraIngress, submitterIngress(9265)},
		},
		"K8sJobMode, unparsable dashboard-port: the default": {
			cluster: func() *rayv1.RayCluster {
				c := ownedByRayJob(newCluster(&rayv1.NetworkPolicyConfig{}), rayv1.K8sJobMode)
				c.Spec.HeadGroupSpec.RayStartParams = map[string]string{"dashboard-port": "x"}
				return c
			}(),
			want: []networkingv1.NetworkPolicyIngressRule{intraIngress, submitterIngress(8265)},
		},
		"SidecarMode: no submitter Pod outside the cluster": {
			cluster: ownedByRayJob(newCluster(&rayv1.NetworkPolicyConfig{}), rayv1.SidecarMode),
			want:    []networkingv1.NetworkPolicyIngressRule{intraIngress},
		},
		"HTTPMode: none": {
			cluster: ownedByRayJob(newCluster(&rayv1.NetworkPolicyConfig{}), rayv1.HTTPMode),
			want:    []networkingv1.NetworkPolicyIngressRule{intraIngress},
		},
		"K8sJobMode label but no controlling RayJob (clusterSelector)": {
			cluster: func() *rayv1.RayCluster {
				c := ownedByRayJob(newCluster(&rayv1.NetworkPolicyConfig{}), rayv1.K8sJobMode)
				c.OwnerReferences = nil
				return c
			}(),
			want: []networkingv1.NetworkPolicyIngressRule{intraIngress},
		},
		"RayJob owner that is not the controller": {
			cluster: func() *rayv1.RayCluster {
				c := ownedByRayJob(newCluster(&rayv1.NetworkPolicyConfig{}), rayv1.K8sJobMode)
				c.OwnerReferences[0].Controller = nil
				return c
			}(),
			want: []networkingv1.NetworkPolicyIngressRule{intraIngress},
		},
		"a RayJob kind of another API group": {
			cluster: func() *rayv1.RayCluster {
				c := ownedByRayJob(newCluster(&rayv1.NetworkPolicyConfig{}), rayv1.K8sJobMode)
				c.OwnerReferences[0].APIVersion = "example.com/v1"
				return c
			}(),
			want: []networkingv1.NetworkPolicyIngressRule{intraIngress},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Build(tc.cluster)[0].Spec.Ingress); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestNames(t *testing.T) {
	if got := HeadName("rc"); got != "rc-head" {
		t.Errorf("HeadName = %q, want rc-head", got)
	}
	if got := WorkerGroupName("rc", "small-group"); got != "rc-workers-small-group" {
		t.Errorf("WorkerGroupName = %q, want rc-workers-small-group", got)
	}
}

// TestBuildCopiesUserRules: the policies do not share memory with the
// cluster's spec, so a caller may change one without touching the other.
func TestBuildCopiesUserRules(t *testing.T) {
	c := newCluster(&rayv1.NetworkPolicyConfig{Head: &rayv1.NetworkPolicyRules{IngressRules: []networkingv1.NetworkPolicyIngressRule{portIngress(8080)}}})
	p := Build(c)[0]
	p.Spec.Ingress[1].Ports[0].Port.IntVal = 1
	if got := c.Spec.NetworkPolicy.Head.IngressRules[0].Ports[0].Port.IntVal; got != 8080 {
		t.Errorf("spec port changed to %d through the built policy", got)
	}
}

func TestUpToDate(t *testing.T) {
	noProtocol := func() *networkingv1.NetworkPolicy {
		c := newCluster(&rayv1.NetworkPolicyConfig{Head: &rayv1.NetworkPolicyRules{IngressRules: []networkingv1.NetworkPolicyIngressRule{
			{Ports: []networkingv1.NetworkPolicyPort{{Port: ptr.To(intstr.FromInt32(8080))}}},
		}}})
		return Build(c)[0]
	}
	asServed := func(mutate func(*networkingv1.NetworkPolicy)) *networkingv1.NetworkPolicy {
		p := noProtocol()
		p.Spec.Ingress[1].Ports[0].Protocol = ptr.To(corev1.ProtocolTCP)
		p.ResourceVersion, p.UID = "7", "np-uid"
		if mutate != nil {
			mutate(p)
		}
		return p
	}
	tests := map[string]struct {
		existing *networkingv1.NetworkPolicy
		want     bool
	}{
		"the API server's TCP default is no change": {existing: asServed(nil), want: true},
		"a changed rule":        {existing: asServed(func(p *networkingv1.NetworkPolicy) { p.Spec.Ingress = p.Spec.Ingress[:1] }), want: false},
		"a changed label":       {existing: asServed(func(p *networkingv1.NetworkPolicy) { p.Labels["ray.io/group"] = "x" }), want: false},
		"a UDP port is not TCP": {existing: asServed(func(p *networkingv1.NetworkPolicy) { p.Spec.Ingress[1].Ports[0].Protocol = ptr.To(corev1.ProtocolUDP) }), want: false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			desired := noProtocol()
			if got := UpToDate(tc.existing, desired); got != tc.want {
				t.Errorf("UpToDate = %v, want %v", got, tc.want)
			}
			if desired.Spec.Ingress[1].Ports[0].Protocol != nil {
				t.Error("UpToDate changed the desired policy")
			}
		})
	}
}
