package rayjob

import (
	"testing"
	"time"

	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// world is what a finished RayJob's cleanup can touch, observed after a pass.
type world struct {
	clusterExists    bool
	workersSuspended bool
	submitterExists  bool
	jobDeleted       bool
}

// observe reads the world back.
func observe(t *testing.T, e *testEnv) world {
	t.Helper()
	cluster := makeCluster("")
	w := world{clusterExists: e.exists(t, cluster), submitterExists: e.exists(t, submitterJob("", t0))}
	w.workersSuspended = w.clusterExists && allWorkerGroupsSuspended(cluster)
	job := e.job(t)
	w.jobDeleted = job == nil || !job.DeletionTimestamp.IsZero()
	return w
}

// untouched is the world before any cleanup.
var untouched = world{clusterExists: true, submitterExists: true}

// deletionCase is one pass over a finished RayJob.
type deletionCase struct {
	job         *rayv1.RayJob
	opts        []envOption
	now         time.Duration // since t0, when the job ended
	objs        []client.Object
	want        world
	wantRequeue time.Duration
}

func runDeletion(t *testing.T, cases map[string]deletionCase) {
	t.Helper()
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			objs := tc.objs
			if objs == nil {
				objs = []client.Object{makeCluster(rayv1.Ready), submitterJob("Complete", t0)}
			}
			e := newEnv(t, append([]client.Object{tc.job}, objs...), tc.opts...)
			e.clock.Step(tc.now)
			result, err := e.reconcile(t)
			if err != nil {
				t.Fatal(err)
			}
			if result != (ctrl.Result{RequeueAfter: tc.wantRequeue}) {
				t.Errorf("result %+v, want requeue after %v", result, tc.wantRequeue)
			}
			if got := observe(t, e); got != tc.want {
				t.Errorf("world %+v, want %+v", got, tc.want)
			}
		})
	}
}

// succeeded and failed are finished RayJobs that ended at t0.
func succeeded(opts ...jobOption) *rayv1.RayJob {
	return makeJob(append([]jobOption{ended(rayv1.JobDeploymentStatusComplete, rayv1.JobStatusSucceeded, t0)}, opts...)...)
}

func failed(opts ...jobOption) *rayv1.RayJob {
	return makeJob(append([]jobOption{ended(rayv1.JobDeploymentStatusFailed, rayv1.JobStatusFailed, t0),
		func(j *rayv1.RayJob) { j.Status.Reason = rayv1.AppFailed }}, opts...)...)
}

func shutdown(ttl int32) jobOption {
	return func(j *rayv1.RayJob) { j.Spec.ShutdownAfterJobFinishes, j.Spec.TTLSecondsAfterFinished = true, ttl }
}

// rules sets deletionRules.
func rules(rs ...rayv1.DeletionRule) jobOption {
	return func(j *rayv1.RayJob) { j.Spec.DeletionStrategy = &rayv1.DeletionStrategy{DeletionRules: rs} }
}

func onJobStatus(s rayv1.JobStatus, policy rayv1.DeletionPolicyType, ttl int32) rayv1.DeletionRule {
	return rayv1.DeletionRule{Policy: policy, Condition: rayv1.DeletionCondition{JobStatus: ptr.To(s), TTLSeconds: ttl}}
}

func onDeploymentFailed(policy rayv1.DeletionPolicyType, ttl int32) rayv1.DeletionRule {
	return rayv1.DeletionRule{Policy: policy, Condition: rayv1.DeletionCondition{
		JobDeploymentStatus: ptr.To(rayv1.JobDeploymentStatusFailed), TTLSeconds: ttl}}
}

// legacy sets onSuccess and onFailure.
func legacy(onSuccess, onFailure rayv1.DeletionPolicyType, ttl int32) jobOption {
	return func(j *rayv1.RayJob) {
		j.Spec.DeletionStrategy = &rayv1.DeletionStrategy{
			OnSuccess: &rayv1.DeletionPolicy{Policy: ptr.To(onSuccess)},
			OnFailure: &rayv1.DeletionPolicy{Policy: ptr.To(onFailure)},
		}
		j.Spec.ShutdownAfterJobFinishes, j.Spec.TTLSecondsAfterFinished = ttl > 0, ttl
	}
}

var (
	gateOn  = withGate("RayJobDeletionPolicy", true)
	gateOff = withGate("RayJobDeletionPolicy", false)
)

// TestDeletionDecision follows seed 001's decision flowchart, branch by branch.
func TestDeletionDecision(t *testing.T) {
	selector := func(j *rayv1.RayJob) {
		j.Spec.RayClusterSpec = nil
		j.Spec.ClusterSelector = map[string]string{"ray.io/cluster": testCluster}
	}
	runDeletion(t, map[string]deletionCase{
		"clusterSelector: never deleted, even with shutdownAfterJobFinishes": {
			job: succeeded(selector, shutdown(0)), opts: []envOption{gateOn}, now: time.Hour, want: untouched,
		},
		"clusterSelector: never deleted by rules": {
			job: succeeded(selector, rules(onJobStatus(rayv1.JobStatusSucceeded, rayv1.DeleteSelf, 0))), opts: []envOption{gateOn},
			now: time.Hour, want: world{clusterExists: true, submitterExists: true, jobDeleted: false},
		},
		"gate off, no shutdownAfterJobFinishes: nothing": {
			job: succeeded(), opts: []envOption{gateOff}, now: time.Hour, want: untouched,
		},
		"gate off, shutdown, TTL pending: requeue at expiry + 2s": {
			job: succeeded(shutdown(60)), opts: []envOption{gateOff}, now: 20 * time.Second, want: untouched, wantRequeue: 42 * time.Second,
		},
		"gate off, shutdown, TTL expired: delete the cluster, keep the submitter": {
			job: failed(shutdown(60)), opts: []envOption{gateOff}, now: 60 * time.Second,
			want: world{submitterExists: true},
		},
		"gate off, shutdown, TTL expired, DELETE_RAYJOB_CR_AFTER_JOB_FINISHES: delete the RayJob": {
			job: succeeded(shutdown(0)), now: time.Second,
			opts: []envOption{gateOff, func(o *Options) { o.DeleteRayJobAfterJobFinishes = true }},
			want: world{clusterExists: true, submitterExists: true, jobDeleted: true},
		},
		"gate on, no deletionStrategy: falls back to shutdownAfterJobFinishes": {
			job: succeeded(shutdown(0)), opts: []envOption{gateOn}, want: world{submitterExists: true},
		},
		"gate on, no deletionStrategy, no shutdown: nothing": {
			job: succeeded(), opts: []envOption{gateOn}, now: time.Hour, want: untouched,
		},
		"cluster already deleted: idempotent": {
			job: succeeded(shutdown(0)), opts: []envOption{gateOff}, objs: []client.Object{submitterJob("Complete", t0)},
			want: world{submitterExists: true},
		},
	})
}

// TestDeletionRules covers the rules mode of seed 001.
func TestDeletionRules(t *testing.T) {
	on := []envOption{gateOn}
	runDeletion(t, map[string]deletionCase{
		"rule for another job status is skipped": {
			job: succeeded(rules(onJobStatus(rayv1.JobStatusFailed, rayv1.DeleteCluster, 0))), opts: on, now: time.Hour, want: untouched,
		},
		"pending rules: requeue at the earliest expiry + 2s": {
			job: succeeded(rules(onJobStatus(rayv1.JobStatusSucceeded, rayv1.DeleteCluster, 60),
				onJobStatus(rayv1.JobStatusSucceeded, rayv1.DeleteWorkers, 30))),
			opts: on, now: 10 * time.Second, want: untouched, wantRequeue: 22 * time.Second,
		},
		"overdue DeleteWorkers suspends every worker group": {
			job: succeeded(rules(onJobStatus(rayv1.JobStatusSucceeded, rayv1.DeleteWorkers, 30))), opts: on, now: 30 * time.Second,
			want: world{clusterExists: true, workersSuspended: true, submitterExists: true},
		},
		"overdue DeleteWorkers and DeleteCluster: only the more impactful DeleteCluster runs": {
			job: succeeded(rules(onJobStatus(rayv1.JobStatusSucceeded, rayv1.DeleteWorkers, 10),
				onJobStatus(rayv1.JobStatusSucceeded, rayv1.DeleteCluster, 20))),
			opts: on, now: time.Minute, want: world{submitterExists: true},
		},
		"overdue rule runs and the pending one is requeued for": {
			job: succeeded(rules(onJobStatus(rayv1.JobStatusSucceeded, rayv1.DeleteWorkers, 10),
				onJobStatus(rayv1.JobStatusSucceeded, rayv1.DeleteSelf, 100))),
			opts: on, now: 20 * time.Second, want: world{clusterExists: true, workersSuspended: true, submitterExists: true},
			wantRequeue: 82 * time.Second,
		},
		"DeleteSelf deletes the RayJob": {
			job: failed(rules(onJobStatus(rayv1.JobStatusFailed, rayv1.DeleteSelf, 0))), opts: on,
			want: world{clusterExists: true, submitterExists: true, jobDeleted: true},
		},
		"DeleteNone does nothing": {
			job: failed(rules(onJobStatus(rayv1.JobStatusFailed, rayv1.DeleteNone, 0))), opts: on, want: untouched,
		},
		"jobDeploymentStatus Failed condition matches a failed deployment": {
			job: failed(rules(onDeploymentFailed(rayv1.DeleteCluster, 0))), opts: on, want: world{submitterExists: true},
		},
		"jobDeploymentStatus Failed condition does not match Complete": {
			job: succeeded(rules(onDeploymentFailed(rayv1.DeleteCluster, 0))), opts: on, want: untouched,
		},
		"DeleteWorkers already done (cluster gone): skipped, no error": {
			job: succeeded(rules(onJobStatus(rayv1.JobStatusSucceeded, rayv1.DeleteWorkers, 0))), opts: on,
			objs: []client.Object{submitterJob("Complete", t0)}, want: world{submitterExists: true},
		},
	})
}

// TestDeletionRulesIdempotent runs the rules mode twice: the second pass
// finds the actions done and changes nothing.
func TestDeletionRulesIdempotent(t *testing.T) {
	job := succeeded(rules(onJobStatus(rayv1.JobStatusSucceeded, rayv1.DeleteWorkers, 0)))
	e := newEnv(t, []client.Object{job, makeCluster(rayv1.Ready)}, gateOn)
	for range 2 {
		if _, err := e.reconcile(t); err != nil {
			t.Fatal(err)
		}
	}
	cluster := makeCluster("")
	if !e.exists(t, cluster) || !allWorkerGroupsSuspended(cluster) {
		t.Fatal("workers not suspended")
	}
	done, err := e.r.isDeletionActionCompleted(t.Context(), e.job(t), rayv1.DeleteWorkers)
	if err != nil || !done {
		t.Errorf("DeleteWorkers completed %v, %v", done, err)
	}
}

// TestLegacyDeletionPolicy covers onSuccess/onFailure with ttlSecondsAfterFinished.
func TestLegacyDeletionPolicy(t *testing.T) {
	on := []envOption{gateOn}
	runDeletion(t, map[string]deletionCase{
		"SUCCEEDED applies onSuccess after the TTL": {
			job: succeeded(legacy(rayv1.DeleteCluster, rayv1.DeleteSelf, 10)), opts: on, now: 10 * time.Second, want: world{submitterExists: true},
		},
		"FAILED applies onFailure": {
			job: failed(legacy(rayv1.DeleteCluster, rayv1.DeleteWorkers, 0)), opts: on,
			want: world{clusterExists: true, workersSuspended: true, submitterExists: true},
		},
		"TTL pending: requeue at expiry + 2s": {
			job: succeeded(legacy(rayv1.DeleteCluster, rayv1.DeleteCluster, 100)), opts: on, now: 50 * time.Second,
			want: untouched, wantRequeue: 52 * time.Second,
		},
		"DeleteNone does nothing": {
			job: failed(legacy(rayv1.DeleteCluster, rayv1.DeleteNone, 0)), opts: on, now: time.Hour, want: untouched,
		},
		"STOPPED matches neither policy": {
			job:  makeJob(ended(rayv1.JobDeploymentStatusComplete, rayv1.JobStatusStopped, t0), legacy(rayv1.DeleteCluster, rayv1.DeleteCluster, 0)),
			opts: on, now: time.Hour, want: untouched,
		},
	})
}

// TestDeletionStrategyNeedsGate: with the gate off, a deletionStrategy is a
// validation error rather than silently ignored.
func TestDeletionStrategyNeedsGate(t *testing.T) {
	e := newEnv(t, []client.Object{succeeded(rules(onJobStatus(rayv1.JobStatusSucceeded, rayv1.DeleteCluster, 0))), makeCluster(rayv1.Ready)}, gateOff)
	if _, err := e.reconcile(t); err != nil {
		t.Fatal(err)
	}
	job := e.job(t)
	if job.Status.JobDeploymentStatus != rayv1.JobDeploymentStatusValidationFailed || !e.exists(t, makeCluster("")) {
		t.Errorf("status %q, cluster deleted %v", job.Status.JobDeploymentStatus, !e.exists(t, makeCluster("")))
	}
}
