package rayjobchaos_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"k8s.io/utils/ptr"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/testing/wrappers"
)

// outcome is what the Ray job of one attempt does: the script of the fake
// Ray cluster.
type outcome string

const (
	// succeed: the Ray job runs and SUCCEEDS.
	succeed outcome = "succeed"
	// fail: the Ray job runs and FAILS.
	fail outcome = "fail"
	// stop: someone stops the running Ray job (STOPPED).
	stop outcome = "stop"
	// submitterFails: the K8sJobMode submitter Job fails before submitting.
	submitterFails outcome = "submitter-fails"
	// hang: the Ray job runs until something else ends the RayJob (its
	// deadline, or its deletion).
	hang outcome = "hang"
)

// failure reports whether the attempt fails (and is retried while
// backoffLimit allows).
func (o outcome) failure() bool { return o == fail || o == submitterFails }

// suspension is when the user suspends the RayJob and resumes it.
type suspension string

const (
	noSuspension suspension = ""
	// suspendAtCreation: the RayJob is created suspended, then resumed.
	suspendAtCreation suspension = "at-creation"
	// suspendEarly: as soon as the first attempt has its cluster name.
	suspendEarly suspension = "early"
	// suspendLate: once the first attempt's Ray job runs.
	suspendLate suspension = "late"
)

// lifecycle is the plan of one RayJob: its spec, the script of its Ray
// jobs, and what its user does. Everything in it comes from the run's seed
// and the lifecycle's index.
type lifecycle struct {
	index int
	name  string
	mode  rayv1.JobSubmissionMode
	// attempts are the outcomes of the attempts in order: failures, then
	// the last one, which decides the RayJob's terminal state.
	attempts     []outcome
	backoffLimit *int32
	// deadline is spec.activeDeadlineSeconds (the only attempt hangs).
	deadline *int32
	suspend  suspension
	// vanish makes the first attempt's Ray job disappear from its
	// dashboard once (a head that lost it); HTTPMode resubmits it.
	vanish bool
	// deleteEarly: the user deletes the RayJob while its Ray job runs.
	deleteEarly bool
	// shutdown is spec.shutdownAfterJobFinishes with ttlSecondsAfterFinished ttl.
	shutdown bool
	ttl      int32
	// rules are spec.deletionStrategy.deletionRules.
	rules []rayv1.DeletionRule
	// waitForOperator makes the user wait, at each step, until the
	// operator has seen the Ray job run before going on.
	waitForOperator bool
	// pace draws the user's pauses between steps.
	pace *rand.Rand
}

var modes = []rayv1.JobSubmissionMode{rayv1.K8sJobMode, rayv1.HTTPMode, rayv1.SidecarMode, rayv1.InteractiveMode}

var modeNames = map[rayv1.JobSubmissionMode]string{
	rayv1.K8sJobMode: "k8s", rayv1.HTTPMode: "http", rayv1.SidecarMode: "sidecar", rayv1.InteractiveMode: "interactive",
}

// newLifecycle draws lifecycle i of the run with seed.
func newLifecycle(seed uint64, i int) *lifecycle {
	rng := rand.New(rand.NewPCG(seed, uint64(i)))
	lc := &lifecycle{index: i, mode: modes[rng.IntN(len(modes))], pace: rand.New(rand.NewPCG(seed^0x9e3779b97f4a7c15, uint64(i)))}
	lc.name = fmt.Sprintf("j%04d-%s", i, modeNames[lc.mode])
	lc.waitForOperator = rng.IntN(2) == 0
	if lc.mode != rayv1.InteractiveMode && rng.IntN(3) > 0 {
		lc.backoffLimit = ptr.To(int32(rng.IntN(3)))
	}
	switch r := rng.Float64(); {
	case r < 0.07:
		lc.deleteEarly, lc.attempts = true, []outcome{hang}
	case r < 0.17:
		lc.deadline, lc.attempts = ptr.To(int32(3+rng.IntN(4))), []outcome{hang}
	default:
		lc.attempts = drawAttempts(rng, lc.mode, ptr.Deref(lc.backoffLimit, 0))
		lc.suspend = drawSuspension(rng, lc.mode)
		lc.vanish = lc.mode == rayv1.HTTPMode && rng.IntN(3) == 0
	}
	drawCleanup(rng, lc)
	return lc
}

// drawAttempts draws the last attempt's outcome and the failed attempts
// before it: a failing last attempt comes after every retry was used.
func drawAttempts(rng *rand.Rand, mode rayv1.JobSubmissionMode, backoffLimit int32) []outcome {
	failure := func() outcome {
		if mode == rayv1.K8sJobMode && rng.IntN(3) == 0 {
			return submitterFails
		}
		return fail
	}
	var last outcome
	switch r := rng.Float64(); {
	case r < 0.55:
		last = succeed
	case r < 0.70:
		last = stop
	default:
		last = failure()
	}
	failures := int(backoffLimit)
	if !last.failure() {
		failures = rng.IntN(int(backoffLimit) + 1)
	}
	attempts := make([]outcome, 0, failures+1)
	for range failures {
		attempts = append(attempts, failure())
	}
	return append(attempts, last)
}

// drawSuspension: an InteractiveMode RayJob is only ever suspended at
// creation (Waiting does not suspend, as in KubeRay).
func drawSuspension(rng *rand.Rand, mode rayv1.JobSubmissionMode) suspension {
	if rng.IntN(5) > 0 {
		return noSuspension
	}
	if mode == rayv1.InteractiveMode {
		return suspendAtCreation
	}
	return []suspension{suspendAtCreation, suspendEarly, suspendLate}[rng.IntN(3)]
}

// drawCleanup chooses shutdownAfterJobFinishes, deletion rules or nothing.
// Suspension needs shutdownAfterJobFinishes (validation).
func drawCleanup(rng *rand.Rand, lc *lifecycle) {
	r := rng.Float64()
	switch {
	case lc.suspend != noSuspension || r < 0.4:
		lc.shutdown, lc.ttl = true, int32(rng.IntN(3))
	case r < 0.75:
		lc.rules = drawRules(rng)
	}
}

// conditions are the deletion conditions the CRD accepts.
var conditions = []rayv1.DeletionCondition{
	{JobStatus: ptr.To(rayv1.JobStatusSucceeded)},
	{JobStatus: ptr.To(rayv1.JobStatusFailed)},
	{JobDeploymentStatus: ptr.To(rayv1.JobDeploymentStatusFailed)},
}

// byImpact lists the deletion policies from least to most destructive;
// validation wants TTLs that do not decrease along it.
var byImpact = []rayv1.DeletionPolicyType{rayv1.DeleteNone, rayv1.DeleteWorkers, rayv1.DeleteCluster, rayv1.DeleteSelf}

// drawRules draws one or two conditions with one or two policies each.
func drawRules(rng *rand.Rand) []rayv1.DeletionRule {
	var rules []rayv1.DeletionRule
	for _, ci := range rng.Perm(len(conditions))[:1+rng.IntN(2)] {
		policies := rng.Perm(len(byImpact))[:1+rng.IntN(2)]
		slices.Sort(policies)
		ttl := int32(rng.IntN(3))
		for _, pi := range policies {
			condition := conditions[ci]
			condition.TTLSeconds = ttl
			rules = append(rules, rayv1.DeletionRule{Policy: byImpact[pi], Condition: condition})
			ttl += int32(rng.IntN(2))
		}
	}
	return rules
}

// rayJob is the RayJob the lifecycle creates in namespace ns.
func (lc *lifecycle) rayJob(ns string) *rayv1.RayJob {
	job := wrappers.MakeRayJob(lc.name, ns).Mode(lc.mode).Obj()
	job.UID = "" // the API server's to give
	job.Spec.BackoffLimit, job.Spec.ActiveDeadlineSeconds = lc.backoffLimit, lc.deadline
	job.Spec.Suspend = lc.suspend == suspendAtCreation
	job.Spec.ShutdownAfterJobFinishes, job.Spec.TTLSecondsAfterFinished = lc.shutdown, lc.ttl
	if lc.rules != nil {
		job.Spec.DeletionStrategy = &rayv1.DeletionStrategy{DeletionRules: lc.rules}
	}
	return job
}

// String is the plan in one line, for reports.
func (lc *lifecycle) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s, attempts %v", lc.name, lc.mode, lc.attempts)
	if lc.backoffLimit != nil {
		fmt.Fprintf(&b, ", backoffLimit %d", *lc.backoffLimit)
	}
	if lc.deadline != nil {
		fmt.Fprintf(&b, ", activeDeadlineSeconds %d", *lc.deadline)
	}
	if lc.suspend != noSuspension {
		fmt.Fprintf(&b, ", suspended %s", lc.suspend)
	}
	if lc.vanish {
		b.WriteString(", the Ray job vanishes once")
	}
	if lc.deleteEarly {
		b.WriteString(", deleted while running")
	}
	if lc.shutdown {
		fmt.Fprintf(&b, ", shutdownAfterJobFinishes ttl %d", lc.ttl)
	}
	for _, r := range lc.rules {
		fmt.Fprintf(&b, ", rule %s", ruleString(r))
	}
	return b.String()
}

func ruleString(r rayv1.DeletionRule) string {
	cond := ""
	if r.Condition.JobStatus != nil {
		cond = "jobStatus=" + string(*r.Condition.JobStatus)
	}
	if r.Condition.JobDeploymentStatus != nil {
		cond = "jobDeploymentStatus=" + string(*r.Condition.JobDeploymentStatus)
	}
	return fmt.Sprintf("%s after %ds on %s", r.Policy, r.Condition.TTLSeconds, cond)
}

// pause is a short pause of the user between two steps.
func (lc *lifecycle) pause() time.Duration {
	return time.Duration(lc.pace.IntN(400)) * time.Millisecond
}

// expectation is the terminal state a lifecycle's script dictates.
type expectation struct {
	deployment rayv1.JobDeploymentStatus
	// jobStatuses are the acceptable Ray job statuses; reasons the
	// acceptable reasons (see expect for the one case with two).
	jobStatuses []rayv1.JobStatus
	reasons     []rayv1.JobFailedReason
	failed      int32
	succeeded   int32
}

// nonTerminal are the Ray job statuses of a job that did not end.
var nonTerminal = []rayv1.JobStatus{rayv1.JobStatusNew, rayv1.JobStatusPending, rayv1.JobStatusRunning}

// expect is the terminal state of a lifecycle that is not deleted early.
func (lc *lifecycle) expect() expectation {
	last := lc.attempts[len(lc.attempts)-1]
	failed := int32(len(lc.attempts) - 1)
	switch {
	case lc.deadline != nil:
		return expectation{deployment: rayv1.JobDeploymentStatusFailed, jobStatuses: nonTerminal,
			reasons: []rayv1.JobFailedReason{rayv1.DeadlineExceeded}, failed: 1}
	case last == succeed:
		return expectation{deployment: rayv1.JobDeploymentStatusComplete, jobStatuses: []rayv1.JobStatus{rayv1.JobStatusSucceeded},
			reasons: []rayv1.JobFailedReason{""}, failed: failed, succeeded: 1}
	case last == stop:
		return expectation{deployment: rayv1.JobDeploymentStatusComplete, jobStatuses: []rayv1.JobStatus{rayv1.JobStatusStopped},
			reasons: []rayv1.JobFailedReason{""}, failed: failed}
	case last == submitterFails:
		return expectation{deployment: rayv1.JobDeploymentStatusFailed, jobStatuses: []rayv1.JobStatus{rayv1.JobStatusNew},
			reasons: []rayv1.JobFailedReason{rayv1.SubmissionFailed}, failed: failed + 1}
	case lc.mode == rayv1.SidecarMode:
		// The sidecar's `ray job submit` exits 1 when the job FAILED. A pass
		// that sees the exit before the dashboard's FAILED asks the
		// dashboard first (issue #53; KubeRay blames the submission at
		// once) and blames the application; a job Ray forgot meanwhile, or
		// a dashboard failing until the status check timeout, still
		// leaves the submission to blame. check pairs the reason with the
		// status.
		return expectation{deployment: rayv1.JobDeploymentStatusFailed,
			jobStatuses: append([]rayv1.JobStatus{rayv1.JobStatusFailed}, nonTerminal...),
			reasons:     []rayv1.JobFailedReason{rayv1.AppFailed, rayv1.SubmissionFailed}, failed: failed + 1}
	default:
		return expectation{deployment: rayv1.JobDeploymentStatusFailed, jobStatuses: []rayv1.JobStatus{rayv1.JobStatusFailed},
			reasons: []rayv1.JobFailedReason{rayv1.AppFailed}, failed: failed + 1}
	}
}

// check compares a terminal status with the expectation.
func (e expectation) check(status *rayv1.RayJobStatus) error {
	failed, succeeded := ptr.Deref(status.Failed, 0), ptr.Deref(status.Succeeded, 0)
	ok := status.JobDeploymentStatus == e.deployment && slices.Contains(e.jobStatuses, status.JobStatus) &&
		slices.Contains(e.reasons, status.Reason) && failed == e.failed && succeeded == e.succeeded
	// A failure blamed on the application shows FAILED; one blamed on the
	// submission shows what was seen before (never FAILED: that would be
	// the application's).
	if (status.Reason == rayv1.AppFailed) != (status.JobStatus == rayv1.JobStatusFailed && status.JobDeploymentStatus == rayv1.JobDeploymentStatusFailed) {
		ok = false
	}
	if ok {
		return nil
	}
	return fmt.Errorf("terminal status %s/%q reason %q failed %d succeeded %d (message %q); want %s/%q reason %q failed %d succeeded %d",
		status.JobDeploymentStatus, status.JobStatus, status.Reason, failed, succeeded, status.Message,
		e.deployment, e.jobStatuses, e.reasons, e.failed, e.succeeded)
}

// cleanupEffect is what the finished RayJob's cleanup leaves.
type cleanupEffect int

const (
	keepEverything cleanupEffect = iota
	suspendWorkers
	deleteCluster
	deleteRayJob
)

func (e cleanupEffect) String() string {
	return [...]string{"nothing deleted", "workers suspended", "cluster deleted", "RayJob deleted"}[e]
}

// cleanupFor is the effect of the lifecycle's cleanup on a RayJob that
// ended with status: shutdownAfterJobFinishes deletes the cluster; of the
// matching deletion rules the most destructive one wins.
func (lc *lifecycle) cleanupFor(status *rayv1.RayJobStatus) cleanupEffect {
	if lc.shutdown {
		return deleteCluster
	}
	effect := keepEverything
	for _, r := range lc.rules {
		c := r.Condition
		if (c.JobStatus != nil && *c.JobStatus != status.JobStatus) ||
			(c.JobDeploymentStatus != nil && *c.JobDeploymentStatus != status.JobDeploymentStatus) {
			continue
		}
		effect = max(effect, map[rayv1.DeletionPolicyType]cleanupEffect{
			rayv1.DeleteNone: keepEverything, rayv1.DeleteWorkers: suspendWorkers,
			rayv1.DeleteCluster: deleteCluster, rayv1.DeleteSelf: deleteRayJob,
		}[r.Policy])
	}
	return effect
}
