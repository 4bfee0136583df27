package validation

import (
	"errors"
	"fmt"
	"slices"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// jobDeletion validates the cleanup settings: the TTL needs
// shutdownAfterJobFinishes, the deletion strategy needs its gate and is
// either legacy (onSuccess and onFailure) or rules, never both.
func jobDeletion(c *jobCheck) error {
	spec := c.spec
	if !spec.ShutdownAfterJobFinishes && spec.TTLSecondsAfterFinished > 0 {
		return kubeRayError("The RayJob spec is invalid: a RayJob with shutdownAfterJobFinishes set to false cannot have TTLSecondsAfterFinished")
	}
	strategy := spec.DeletionStrategy
	if strategy == nil {
		return nil
	}
	if !deletionPolicyOn(c.gates) {
		return kubeRayError("RayJobDeletionPolicy feature gate must be enabled to use DeletionStrategy")
	}
	legacy := strategy.OnSuccess != nil || strategy.OnFailure != nil
	rules := len(strategy.DeletionRules) > 0
	switch {
	case rules && spec.ShutdownAfterJobFinishes:
		return kubeRayError("The RayJob spec is invalid: spec.shutdownAfterJobFinishes and spec.deletionStrategy.deletionRules are mutually exclusive")
	case rules && legacy:
		return kubeRayError("The RayJob spec is invalid: Cannot use both legacy onSuccess/onFailure fields and deletionRules simultaneously")
	case legacy:
		return validateLegacyPolicies(spec)
	case rules:
		return validateDeletionRuleList(spec)
	default:
		return kubeRayError("The RayJob spec is invalid: DeletionStrategy requires either BOTH onSuccess and onFailure, OR the deletionRules field (cannot be empty)")
	}
}

// validateLegacyPolicies checks onSuccess and onFailure.
func validateLegacyPolicies(spec *rayv1.RayJobSpec) error {
	strategy := spec.DeletionStrategy
	if strategy.OnSuccess == nil || strategy.OnFailure == nil {
		return kubeRayError("both DeletionStrategy.OnSuccess and DeletionStrategy.OnFailure must be set when using the legacy deletion policy fields of DeletionStrategy")
	}
	if strategy.OnSuccess.Policy == nil {
		return kubeRayError("the DeletionPolicyType field of DeletionStrategy.OnSuccess cannot be unset when DeletionStrategy is enabled")
	}
	if strategy.OnFailure.Policy == nil {
		return kubeRayError("the DeletionPolicyType field of DeletionStrategy.OnFailure cannot be unset when DeletionStrategy is enabled")
	}
	onSuccess, onFailure := *strategy.OnSuccess.Policy, *strategy.OnFailure.Policy
	if spec.UsesClusterSelector() {
		if touchesCluster(onSuccess) {
			return fmt.Errorf("the ClusterSelector mode doesn't support DeletionStrategy=%s on success", onSuccess)
		}
		if touchesCluster(onFailure) {
			return fmt.Errorf("the ClusterSelector mode doesn't support DeletionStrategy=%s on failure", onFailure)
		}
	}
	if (onSuccess == rayv1.DeleteWorkers || onFailure == rayv1.DeleteWorkers) && jobAutoscales(spec) {
		return kubeRayError("DeletionStrategy=DeleteWorkers currently does not support RayCluster with autoscaling enabled")
	}
	if spec.ShutdownAfterJobFinishes && (onSuccess == rayv1.DeleteNone || onFailure == rayv1.DeleteNone) {
		return kubeRayError("The RayJob spec is invalid: shutdownAfterJobFinshes is set to 'true' while deletion policy is 'DeleteNone'")
	}
	return nil
}

// ruleKey identifies a rule: its condition and policy.
type ruleKey struct {
	condition string
	policy    rayv1.DeletionPolicyType
}

// validateDeletionRuleList checks every rule, reports them all at once, and
// requires that, per condition, TTLs grow with destructiveness
// (DeleteWorkers <= DeleteCluster <= DeleteSelf).
func validateDeletionRuleList(spec *rayv1.RayJobSpec) error {
	var errs []error
	ttls := map[ruleKey]int32{}
	var conditions []string
	for i, rule := range spec.DeletionStrategy.DeletionRules {
		if err := validateDeletionRule(spec, rule); err != nil {
			errs = append(errs, fmt.Errorf("deletionRules[%d]: %w", i, err))
			continue
		}
		condition := conditionName(rule.Condition)
		key := ruleKey{condition: condition, policy: rule.Policy}
		if _, dup := ttls[key]; dup {
			errs = append(errs, fmt.Errorf("deletionRules[%d]: duplicate rule for DeletionPolicyType '%s' and %s", i, rule.Policy, condition))
			continue
		}
		if !slices.Contains(conditions, condition) {
			conditions = append(conditions, condition)
		}
		ttls[key] = rule.Condition.TTLSeconds
	}
	for _, condition := range conditions {
		errs = append(errs, ttlOrder(condition, ttls)...)
	}
	return errors.Join(errs...)
}

// validateDeletionRule checks one rule on its own.
func validateDeletionRule(spec *rayv1.RayJobSpec, rule rayv1.DeletionRule) error {
	c := rule.Condition
	switch {
	case c.JobStatus != nil && c.JobDeploymentStatus != nil:
		return kubeRayError("cannot set both JobStatus and JobDeploymentStatus at the same time")
	case c.JobStatus == nil && c.JobDeploymentStatus == nil:
		return kubeRayError("exactly one of JobStatus and JobDeploymentStatus must be set")
	case c.TTLSeconds < 0:
		return kubeRayError("TTLSeconds must be non-negative")
	case spec.UsesClusterSelector() && touchesCluster(rule.Policy):
		return kubeRayErrorf("DeletionPolicyType '%s' not supported when ClusterSelector is set", rule.Policy)
	case rule.Policy == rayv1.DeleteWorkers && jobAutoscales(spec):
		return kubeRayError("DeletionPolicyType 'DeleteWorkers' not supported with autoscaling enabled")
	}
	return nil
}

// ttlOrder reports the rules of one condition whose TTL is shorter than that
// of a less destructive rule.
func ttlOrder(condition string, ttls map[ruleKey]int32) []error {
	var errs []error
	var prev rayv1.DeletionPolicyType
	for _, policy := range []rayv1.DeletionPolicyType{rayv1.DeleteWorkers, rayv1.DeleteCluster, rayv1.DeleteSelf} {
		ttl, ok := ttls[ruleKey{condition: condition, policy: policy}]
		if !ok {
			continue
		}
		if prevTTL, had := ttls[ruleKey{condition: condition, policy: prev}]; prev != "" && had && ttl < prevTTL {
			errs = append(errs, fmt.Errorf("for %s: %s TTL (%d) must be >= %s TTL (%d)", condition, policy, ttl, prev, prevTTL))
		}
		prev = policy
	}
	return errs
}

// conditionName renders a condition as "JobStatus 'SUCCEEDED'" or
// "JobDeploymentStatus 'Failed'".
func conditionName(c rayv1.DeletionCondition) string {
	if c.JobStatus != nil {
		return fmt.Sprintf("JobStatus '%s'", *c.JobStatus)
	}
	return fmt.Sprintf("JobDeploymentStatus '%s'", *c.JobDeploymentStatus)
}

// touchesCluster reports whether a policy changes the RayCluster.
func touchesCluster(policy rayv1.DeletionPolicyType) bool {
	return policy == rayv1.DeleteCluster || policy == rayv1.DeleteWorkers
}

// jobAutoscales reports whether the RayJob's cluster autoscales.
func jobAutoscales(spec *rayv1.RayJobSpec) bool {
	return spec.RayClusterSpec != nil && autoscalingEnabled(spec.RayClusterSpec)
}
