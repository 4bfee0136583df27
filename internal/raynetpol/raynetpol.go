// Package raynetpol builds the NetworkPolicies of a RayCluster with
// spec.networkPolicy (feature gate RayClusterNetworkPolicy): one for the
// head Pod, "<cluster>-head", and one per worker group,
// "<cluster>-workers-<group>", as KubeRay names them.
//
// Every policy admits traffic between the Pods of the cluster (all ports,
// both ways). The head policy also admits, for the cluster of a K8sJobMode
// RayJob, the RayJob's submitter Pod to the dashboard port. Nothing else is
// built in, DNS included: the user's rules are appended. The mode says which
// directions are restricted at all; an unrestricted direction gets neither a
// policy type nor rules.
package raynetpol

import (
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/ownerref"
)

// dashboardPortParam is the rayStartParams key that moves the dashboard.
const dashboardPortParam = "dashboard-port"

// HeadName is the name of the head Pod's NetworkPolicy.
func HeadName(clusterName string) string { return clusterName + "-head" }

// WorkerGroupName is the name of a worker group's NetworkPolicy.
func WorkerGroupName(clusterName, groupName string) string {
	return fmt.Sprintf("%s-workers-%s", clusterName, groupName)
}

// Build returns the NetworkPolicies spec.networkPolicy asks for: the head's
// first, then one per worker group in spec order. It returns nil when the
// field is unset.
func Build(cluster *rayv1.RayCluster) []*networkingv1.NetworkPolicy {
	np := cluster.Spec.NetworkPolicy
	if np == nil {
		return nil
	}
	mode := Mode(np)
	policies := []*networkingv1.NetworkPolicy{buildHead(cluster, mode)}
	for i := range cluster.Spec.WorkerGroupSpecs {
		policies = append(policies, buildWorkerGroup(cluster, mode, cluster.Spec.WorkerGroupSpecs[i].GroupName))
	}
	return policies
}

// Mode is the configured mode, DenyAll when unset.
func Mode(np *rayv1.NetworkPolicyConfig) rayv1.NetworkPolicyMode {
	if np.Mode == nil {
		return rayv1.NetworkPolicyDenyAll
	}
	return *np.Mode
}

func restrictsIngress(mode rayv1.NetworkPolicyMode) bool {
	return mode == rayv1.NetworkPolicyDenyAll || mode == rayv1.NetworkPolicyDenyAllIngress
}

func restrictsEgress(mode rayv1.NetworkPolicyMode) bool {
	return mode == rayv1.NetworkPolicyDenyAll || mode == rayv1.NetworkPolicyDenyAllEgress
}

func buildHead(cluster *rayv1.RayCluster, mode rayv1.NetworkPolicyMode) *networkingv1.NetworkPolicy {
	ingress := sameClusterIngress(cluster.Name)
	if peer := submitterPeer(cluster); peer != nil {
		tcp := corev1.ProtocolTCP
		port := intstr.FromInt32(dashboardPort(cluster))
		ingress = append(ingress, networkingv1.NetworkPolicyIngressRule{
			From:  []networkingv1.NetworkPolicyPeer{*peer},
			Ports: []networkingv1.NetworkPolicyPort{{Protocol: &tcp, Port: &port}},
		})
	}
	selector := map[string]string{
		rayv1.LabelCluster:  cluster.Name,
		rayv1.LabelNodeType: string(rayv1.HeadNode),
	}
	return policy(cluster, HeadName(cluster.Name), rayv1.HeadGroupName, selector,
		spec(mode, ingress, cluster.Spec.NetworkPolicy.Head, cluster.Name))
}

func buildWorkerGroup(cluster *rayv1.RayCluster, mode rayv1.NetworkPolicyMode, group string) *networkingv1.NetworkPolicy {
	selector := map[string]string{
		rayv1.LabelCluster:  cluster.Name,
		rayv1.LabelNodeType: string(rayv1.WorkerNode),
		rayv1.LabelGroup:    group,
	}
	return policy(cluster, WorkerGroupName(cluster.Name, group), group, selector,
		spec(mode, sameClusterIngress(cluster.Name), groupRules(cluster.Spec.NetworkPolicy, group), cluster.Name))
}

// groupRules are a group's entry in workerGroups, which replaces the
// worker rules for that group, or else the worker rules.
func groupRules(np *rayv1.NetworkPolicyConfig, group string) *rayv1.NetworkPolicyRules {
	for i := range np.WorkerGroups {
		if np.WorkerGroups[i].GroupName == group {
			return &np.WorkerGroups[i].NetworkPolicyRules
		}
	}
	return np.Worker
}

// spec restricts the directions mode denies, each with its base rules
// followed by the user's.
func spec(mode rayv1.NetworkPolicyMode, baseIngress []networkingv1.NetworkPolicyIngressRule,
	user *rayv1.NetworkPolicyRules, clusterName string,
) networkingv1.NetworkPolicySpec {
	var s networkingv1.NetworkPolicySpec
	if user == nil {
		user = &rayv1.NetworkPolicyRules{}
	}
	if restrictsIngress(mode) {
		s.PolicyTypes = append(s.PolicyTypes, networkingv1.PolicyTypeIngress)
		s.Ingress = baseIngress
		for i := range user.IngressRules {
			s.Ingress = append(s.Ingress, *user.IngressRules[i].DeepCopy())
		}
	}
	if restrictsEgress(mode) {
		s.PolicyTypes = append(s.PolicyTypes, networkingv1.PolicyTypeEgress)
		s.Egress = sameClusterEgress(clusterName)
		for i := range user.EgressRules {
			s.Egress = append(s.Egress, *user.EgressRules[i].DeepCopy())
		}
	}
	return s
}

func policy(cluster *rayv1.RayCluster, name, group string, selector map[string]string, s networkingv1.NetworkPolicySpec) *networkingv1.NetworkPolicy {
	s.PodSelector = metav1.LabelSelector{MatchLabels: selector}
	return &networkingv1.NetworkPolicy{
		ObjectMeta: metav1.ObjectMeta{
			Name:      name,
			Namespace: cluster.Namespace,
			Labels: map[string]string{
				rayv1.LabelCluster:   cluster.Name,
				rayv1.LabelGroup:     group,
				rayv1.LabelAppName:   rayv1.AppName,
				rayv1.LabelCreatedBy: rayv1.CreatedByOperator,
			},
			OwnerReferences: []metav1.OwnerReference{ownerref.ForCluster(cluster)},
		},
		Spec: s,
	}
}

// sameCluster selects the Pods of the cluster.
func sameCluster(clusterName string) []networkingv1.NetworkPolicyPeer {
	return []networkingv1.NetworkPolicyPeer{{
		PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{rayv1.LabelCluster: clusterName}},
	}}
}

func sameClusterIngress(clusterName string) []networkingv1.NetworkPolicyIngressRule {
	return []networkingv1.NetworkPolicyIngressRule{{From: sameCluster(clusterName)}}
}

func sameClusterEgress(clusterName string) []networkingv1.NetworkPolicyEgressRule {
	return []networkingv1.NetworkPolicyEgressRule{{To: sameCluster(clusterName)}}
}

// submitterPeer selects the submitter Pod of the RayJob that controls the
// cluster, when that RayJob runs in K8sJobMode: the only mode with a
// submitter Pod outside the cluster. A cluster a RayJob only selects
// (clusterSelector) gets none; its user adds a rule.
func submitterPeer(cluster *rayv1.RayCluster) *networkingv1.NetworkPolicyPeer {
	if cluster.Labels[rayv1.LabelJobSubmissionMode] != string(rayv1.K8sJobMode) {
		return nil
	}
	owner := metav1.GetControllerOf(cluster)
	if owner == nil || owner.Kind != rayv1.KindRayJob {
		return nil
	}
	if gv, err := schema.ParseGroupVersion(owner.APIVersion); err != nil || gv.Group != rayv1.GroupVersion.Group {
		return nil
	}
	return &networkingv1.NetworkPolicyPeer{PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{
		rayv1.LabelOriginatedFromCRName: owner.Name,
		rayv1.LabelOriginatedFromCRD:    rayv1.KindRayJob,
	}}}
}

// dashboardPort is rayStartParams' dashboard-port when it is a number, else
// the default port.
func dashboardPort(cluster *rayv1.RayCluster) int32 {
	if p, err := strconv.ParseInt(cluster.Spec.HeadGroupSpec.RayStartParams[dashboardPortParam], 10, 32); err == nil {
		return int32(p)
	}
	return rayv1.DefaultDashboardPort
}

// UpToDate reports whether an existing policy has the labels and spec of
// the desired one. Ports without a protocol count as TCP, the API server's
// default, so that the user's rules that omit it do not look changed on
// every pass.
func UpToDate(existing, desired *networkingv1.NetworkPolicy) bool {
	want := desired.Spec.DeepCopy()
	defaultProtocols(want)
	return apiequality.Semantic.DeepEqual(existing.Labels, desired.Labels) &&
		apiequality.Semantic.DeepEqual(existing.Spec, *want)
}

func defaultProtocols(s *networkingv1.NetworkPolicySpec) {
	for i := range s.Ingress {
		setTCP(s.Ingress[i].Ports)
	}
	for i := range s.Egress {
		setTCP(s.Egress[i].Ports)
	}
}

func setTCP(ports []networkingv1.NetworkPolicyPort) {
	for i := range ports {
		if ports[i].Protocol == nil {
			tcp := corev1.ProtocolTCP
			ports[i].Protocol = &tcp
		}
	}
}
