package rayjob

import (
	"context"
	"time"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/passsteps"
)

// policyImpact orders deletion policies from least to most destructive.
var policyImpact = map[rayv1.DeletionPolicyType]int{
	rayv1.DeleteNone:    1,
	rayv1.DeleteWorkers: 2,
	rayv1.DeleteCluster: 3,
	rayv1.DeleteSelf:    4,
}

// handleDeletionRules runs at most one deletion rule per pass. Rules whose
// condition does not match are ignored; a matching rule is pending until its
// TTL (counted from EndTime) passes, then overdue unless its effect is
// already observed. Of the overdue rules the most destructive runs, since it
// releases the most (and may make the others moot, as DeleteCluster does
// DeleteWorkers). The pass then requeues for the earliest pending rule.
func (r *Reconciler) handleDeletionRules(ctx context.Context, job *rayv1.RayJob) (passsteps.Result, error) {
	var overdue []rayv1.DeletionRule
	var next *time.Time
	for _, rule := range job.Spec.DeletionStrategy.DeletionRules {
		if !deletionRuleMatches(rule, job) {
			continue
		}
		if expiry := r.ttlExpiry(job, rule.Condition.TTLSeconds); r.now().Before(expiry) {
			if next == nil || expiry.Before(*next) {
				next = &expiry
			}
			continue
		}
		done, err := r.isDeletionActionCompleted(ctx, job, rule.Policy)
		if err != nil {
			return passsteps.Result{}, err
		}
		if !done {
			overdue = append(overdue, rule)
		}
	}
	if len(overdue) > 0 {
		if err := r.executeDeletionPolicy(ctx, job, mostImpactfulRule(overdue).Policy); err != nil {
			return passsteps.Result{}, err
		}
	}
	if next != nil {
		return passsteps.Result{RequeueAfter: r.requeueDelayFor(*next)}, nil
	}
	return passsteps.Result{}, nil
}

// deletionRuleMatches reports whether the rule's condition (exactly one of
// jobStatus and jobDeploymentStatus) matches the finished RayJob.
func deletionRuleMatches(rule rayv1.DeletionRule, job *rayv1.RayJob) bool {
	if rule.Condition.JobStatus != nil {
		return *rule.Condition.JobStatus == job.Status.JobStatus
	}
	if rule.Condition.JobDeploymentStatus != nil {
		return *rule.Condition.JobDeploymentStatus == job.Status.JobDeploymentStatus
	}
	return false
}

// mostImpactfulRule returns the most destructive rule; the first one wins a
// tie.
func mostImpactfulRule(rules []rayv1.DeletionRule) rayv1.DeletionRule {
	best := rules[0]
	for _, rule := range rules[1:] {
		if policyImpact[rule.Policy] > policyImpact[best.Policy] {
			best = rule
		}
	}
	return best
}
