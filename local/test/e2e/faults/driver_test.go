package faults_test

import (
	"context"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/local/internal/e2eutil"
)

// killPoint is an observable moment of a RayJob's life at which the
// operator may be killed.
type killPoint struct {
	name string
	// mode, when set, is the only submission mode that has this point.
	mode rayv1.JobSubmissionMode
	// reached holds from the moment on (a point passed while the test
	// looked elsewhere is still reached).
	reached func(snapshot) bool
}

// deploymentOrder ranks the deployment statuses a successful RayJob goes
// through.
var deploymentOrder = []rayv1.JobDeploymentStatus{
	rayv1.JobDeploymentStatusNew, rayv1.JobDeploymentStatusInitializing, rayv1.JobDeploymentStatusWaiting,
	rayv1.JobDeploymentStatusRunning, rayv1.JobDeploymentStatusComplete,
}

// atLeast holds once the RayJob's deployment status is d or later.
func atLeast(d rayv1.JobDeploymentStatus) func(snapshot) bool {
	want := slices.Index(deploymentOrder, d)
	return func(s snapshot) bool {
		return s.job != nil && slices.Index(deploymentOrder, s.job.Status.JobDeploymentStatus) >= want
	}
}

// killPoints are the moments in the order a RayJob passes them.
var killPoints = []killPoint{
	{name: "just created", reached: func(snapshot) bool { return true }},
	{name: "Initializing", reached: atLeast(rayv1.JobDeploymentStatusInitializing)},
	{name: "submitter Job created", mode: rayv1.K8sJobMode, reached: func(s snapshot) bool { return s.submitterJob }},
	{name: "Waiting for the user", mode: rayv1.InteractiveMode, reached: atLeast(rayv1.JobDeploymentStatusWaiting)},
	{name: "Running", reached: atLeast(rayv1.JobDeploymentStatusRunning)},
	{name: "Ray job RUNNING", reached: func(s snapshot) bool {
		return s.rayJobStatus == rayv1.JobStatusRunning || rayv1.IsJobTerminal(s.rayJobStatus)
	}},
	{name: "Complete, before the cluster's deletion", reached: atLeast(rayv1.JobDeploymentStatusComplete)},
}

// plannedKill is a kill point with the seeded delays around the kill.
type plannedKill struct {
	point killPoint
	// jitter is how long after the point is seen the operator is killed;
	// down how long it stays dead.
	jitter, down time.Duration
}

func (k plannedKill) String() string {
	return fmt.Sprintf("%q+%v (down %v)", k.point.name, k.jitter, k.down)
}

// testRand is t's random source: the suite's seed and the test's name, so
// that a test draws the same kills whichever tests run before it.
func testRand(t *testing.T, seed uint64) *rand.Rand {
	h := fnv.New64a()
	_, _ = h.Write([]byte(t.Name()))
	return rand.New(rand.NewPCG(seed, h.Sum64()))
}

// planKills draws two or three of mode's kill points, in order, each with
// a jitter under 1.5 s and a downtime under 3 s.
func planKills(rng *rand.Rand, mode rayv1.JobSubmissionMode) []plannedKill {
	var points []killPoint
	for _, p := range killPoints {
		if p.mode == "" || p.mode == mode {
			points = append(points, p)
		}
	}
	chosen := rng.Perm(len(points))[:2+rng.IntN(2)]
	slices.Sort(chosen)
	plan := make([]plannedKill, 0, len(chosen))
	for _, i := range chosen {
		plan = append(plan, plannedKill{
			point:  points[i],
			jitter: time.Duration(rng.IntN(1500)) * time.Millisecond,
			down:   time.Duration(rng.IntN(3000)) * time.Millisecond,
		})
	}
	return plan
}

// killRecord is one kill as it happened.
type killRecord struct {
	planned plannedKill
	// died is when the killed operator was gone, restarted when the next
	// one was started.
	died, restarted time.Time
	// logFile is the restarted operator's log.
	logFile string
}

// killAlong carries out plan on op while o watches the RayJob: for each
// kill, wait for its point, wait its jitter, SIGKILL the operator, and
// start it again after its downtime.
func killAlong(ctx context.Context, t *testing.T, op *e2eutil.Operator, o *observer, plan []plannedKill) []killRecord {
	t.Helper()
	var kills []killRecord
	for _, k := range plan {
		err := pollFast(ctx, func() (bool, error) {
			snap := o.snapshot()
			return k.point.reached(snap), describe(snap)
		})
		if err != nil {
			t.Fatalf("waiting for kill point %q: %v", k.point.name, err)
		}
		pause(ctx, k.jitter)
		died, err := op.Kill()
		if err != nil {
			t.Fatal(err)
		}
		pause(ctx, k.down)
		restarted := time.Now()
		logFile, err := op.Start()
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("killed the operator at %v, restarted %v later; the RayJob was %s", k, restarted.Sub(died).Round(time.Millisecond), describe(o.snapshot()))
		kills = append(kills, killRecord{planned: k, died: died, restarted: restarted, logFile: logFile})
	}
	return kills
}

// pause waits d (a seeded delay of the fault plan, not a wait for a
// condition) or until ctx ends.
func pause(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// describe says where a RayJob is, for kill logs and timeouts.
func describe(s snapshot) error {
	if s.job == nil {
		return fmt.Errorf("RayJob not seen yet")
	}
	st := s.job.Status
	return fmt.Errorf("deployment %q, job %q (Ray says %q), submitter Job %v, message %q", st.JobDeploymentStatus, st.JobStatus, s.rayJobStatus, s.submitterJob, st.Message)
}

// figures is a test's line of figures: runs, kills, duplicate
// submissions; for each kill the seconds from the operator's death to the
// next progress it made visible (a status write, or for a kill after
// Complete the cluster's deletion, which waits for the TTL); how late the
// cluster was deleted after the TTL expired (status.endTime has whole
// seconds); and how long the RayJob took.
func figures(o *observer, done *rayv1.RayJob, kills []killRecord, duplicates int, took time.Duration) string {
	var recover, startup []string
	for _, k := range kills {
		progress, ok := o.progressAfter(k.died)
		recover = append(recover, secondsSince(k.died, progress, ok))
		workers, ok := workersStarted(k.logFile, "rayjob")
		startup = append(startup, secondsSince(k.restarted, workers, ok))
	}
	expiry := done.Status.EndTime.Add(ttlSeconds * time.Second)
	return fmt.Sprintf("FIGURES mode=%s runs=1 kills=%d duplicate_submissions=%d seconds_kill_to_next_progress=[%s] seconds_restart_to_rayjob_workers=[%s] cluster_deleted_s_after_ttl=%.1f seconds_created_to_cluster_deleted=%.0f",
		done.Spec.SubmissionMode, len(kills), duplicates, strings.Join(recover, " "), strings.Join(startup, " "),
		o.clusterGone().Sub(expiry).Seconds(), took.Seconds())
}

// secondsSince formats the seconds from from to to, or "none".
func secondsSince(from, to time.Time, ok bool) string {
	if !ok {
		return "none"
	}
	return fmt.Sprintf("%.1f", to.Sub(from).Seconds())
}
