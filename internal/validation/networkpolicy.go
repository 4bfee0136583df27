package validation

import (
	"fmt"

	k8svalidation "k8s.io/apimachinery/pkg/util/validation"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/features"
)

// networkPolicy checks spec.networkPolicy: the gate must be on, rules must
// only be given for a direction that is denied, and per-group rules must
// name existing groups. Group names are part of the generated NetworkPolicy
// names, so here (and only here, not to break existing clusters) they must
// be DNS-1123 labels.
func networkPolicy(c *specCheck) error {
	np := c.spec.NetworkPolicy
	if np == nil {
		return nil
	}
	if !c.gates.Enabled(features.RayClusterNetworkPolicy) {
		return fmt.Errorf("spec.networkPolicy requires the RayClusterNetworkPolicy feature gate to be enabled")
	}
	mode := rayv1.NetworkPolicyDenyAll
	if np.Mode != nil {
		mode = *np.Mode
	}
	if err := policyRules("networkPolicy.head", np.Head, mode); err != nil {
		return err
	}
	if err := policyRules("networkPolicy.worker", np.Worker, mode); err != nil {
		return err
	}
	groups := make(map[string]bool, len(c.spec.WorkerGroupSpecs))
	for _, group := range c.spec.WorkerGroupSpecs {
		if errs := k8svalidation.IsDNS1123Label(group.GroupName); len(errs) > 0 {
			return fmt.Errorf("worker group name %q must be a valid DNS1123 label when networkPolicy is enabled (it is embedded in the NetworkPolicy name): %v",
				group.GroupName, errs)
		}
		groups[group.GroupName] = true
	}
	for i := range np.WorkerGroups {
		wg := &np.WorkerGroups[i]
		if err := policyRules(fmt.Sprintf("networkPolicy.workerGroups[%q]", wg.GroupName), &wg.NetworkPolicyRules, mode); err != nil {
			return err
		}
		if !groups[wg.GroupName] {
			return fmt.Errorf("networkPolicy.workerGroups[%q] does not match any group name in workerGroupSpecs", wg.GroupName)
		}
	}
	return nil
}

// policyRules rejects ingress rules when only egress is denied and the
// other way round: such rules would never apply.
func policyRules(path string, rules *rayv1.NetworkPolicyRules, mode rayv1.NetworkPolicyMode) error {
	if rules == nil {
		return nil
	}
	if mode == rayv1.NetworkPolicyDenyAllEgress && len(rules.IngressRules) > 0 {
		return fmt.Errorf("%s.ingressRules cannot be set when mode is %q (ingress is not restricted)", path, mode)
	}
	if mode == rayv1.NetworkPolicyDenyAllIngress && len(rules.EgressRules) > 0 {
		return fmt.Errorf("%s.egressRules cannot be set when mode is %q (egress is not restricted)", path, mode)
	}
	return nil
}
