package rayjobchaos_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/controller/rayjob"
	"github.com/ray-operator/ray-operator/internal/dashboard"
	"github.com/ray-operator/ray-operator/internal/submitter"
	"github.com/ray-operator/ray-operator/internal/testing/testenv"
)

// stepTimeout bounds each wait of a user: a RayJob that does not get there
// in that time, through kills and dashboard faults, is stuck. It is twice
// the longest the operator may leave a RayJob as it is (a dashboard
// back-off at its cap; a finished submitter's timeout and answer grace)
// plus the longest the kill schedule keeps it from acting (2 min 25.5 s
// in all): derived from the operator's constants, so that a longer back-off
// or grace there cannot make the suite fail while the operator is right.
const stepTimeout = 2*max(dashboard.DefaultRetryMax, rayjob.SubmitterDecisionDelay) + longestProgressGap

// errEnded: the RayJob reached a terminal state while its user waited for
// something else (a deadline, or a wrong ending the final check reports).
var errEnded = errors.New("the RayJob ended")

// errDeleted: the user deleted the RayJob early, as planned.
var errDeleted = errors.New("the RayJob was deleted early")

// conflictBackoff retries the user's writes that meet the operator's.
var conflictBackoff = wait.Backoff{Steps: 30, Duration: 20 * time.Millisecond, Factor: 1.5, Cap: time.Second}

// actor is the user of one lifecycle, and the parts of the world that
// follow its script: the Job controller and submitter Pod (K8sJobMode), the
// sidecar (SidecarMode), and the Ray cluster running its jobs. It reads what
// the watches recorded and acts through the API server and the dashboards.
type actor struct {
	w           *world
	lc          *lifecycle
	ctx         context.Context
	began       time.Time
	trace       []string
	prevCluster string
	suspended   bool
}

// note adds a step to the trace reported when the lifecycle fails.
func (a *actor) note(format string, args ...any) {
	a.trace = append(a.trace, fmt.Sprintf("+%6.2fs %s", time.Since(a.began).Seconds(), fmt.Sprintf(format, args...)))
}

// run plays the lifecycle to its end: the RayJob is terminal, cleaned up
// as its spec says, then deleted and gone (its finalizer removed).
func (a *actor) run() error {
	a.began = time.Now()
	if err := a.create(); err != nil {
		return err
	}
	if a.lc.suspend == suspendAtCreation {
		if err := a.suspendAndResume(false); err != nil {
			return err
		}
	}
	for i, out := range a.lc.attempts {
		err := a.attempt(i, out)
		if errors.Is(err, errDeleted) {
			return a.awaitGone()
		}
		if errors.Is(err, errEnded) {
			a.note("the RayJob ended during attempt %d", i)
			break
		}
		if err != nil {
			return fmt.Errorf("attempt %d: %w", i, err)
		}
	}
	return a.finish()
}

// create creates the RayJob the plan describes.
func (a *actor) create() error {
	a.note("create")
	return a.w.c.Create(a.ctx, a.lc.rayJob(a.w.ns))
}

// attempt plays attempt i, whose Ray job does out.
func (a *actor) attempt(i int, out outcome) error {
	job, err := a.await(fmt.Sprintf("attempt %d to get a cluster", i), func(job *rayv1.RayJob) bool {
		name := job.Status.RayClusterName
		return name != "" && name != a.prevCluster && !job.Spec.Suspend
	})
	if err != nil {
		return err
	}
	cluster, id := job.Status.RayClusterName, job.Status.JobID
	a.prevCluster = cluster
	a.note("attempt %d on cluster %s, job id %q", i, cluster, id)
	if i == 0 && a.lc.suspend == suspendEarly && !a.suspended {
		if err := a.suspendAndResume(true); err != nil {
			return err
		}
		return a.attempt(i, out)
	}
	id, err = a.submit(cluster, id, i, out)
	if err != nil || id == "" {
		return err
	}
	pause(a.ctx, a.lc.pause())
	if !a.w.dash.move(cluster, id, rayv1.JobStatusRunning) {
		return a.ended(fmt.Errorf("Ray job %s is not on the dashboard of %s", id, cluster))
	}
	a.note("Ray job %s RUNNING", id)
	if restart, err := a.whileRunning(i, cluster, id); restart || err != nil {
		if err == nil {
			return a.attempt(i, out)
		}
		return err
	}
	if out == hang {
		return nil
	}
	pause(a.ctx, a.lc.pause())
	return a.end(cluster, id, out)
}

// ended turns a failure into errEnded when the RayJob has ended (the
// dashboard went with its cluster).
func (a *actor) ended(err error) error {
	if err == nil {
		return nil
	}
	if job, _ := a.w.rec.rayJobState(a.lc.name); job != nil && rayv1.IsJobDeploymentTerminal(job.Status.JobDeploymentStatus) {
		return errEnded
	}
	return err
}

// submit plays whoever submits the attempt's Ray job and returns its id;
// "" when the submitter fails instead.
func (a *actor) submit(cluster, id string, i int, out outcome) (string, error) {
	dashboardUp := func(*rayv1.RayJob) bool { return a.w.dash.fake(cluster) != nil }
	switch a.lc.mode {
	case rayv1.K8sJobMode:
		// The submitter Job's Pod waits for the GCS, then submits unless
		// `ray job status` knows the id.
		if _, err := a.await("the submitter Job for "+id, func(*rayv1.RayJob) bool {
			sub := a.w.rec.batchJob(a.lc.name)
			return sub != nil && submissionIDOf(sub) == id
		}); err != nil {
			return "", err
		}
		if _, err := a.await("the dashboard of "+cluster, dashboardUp); err != nil {
			return "", err
		}
		if out == submitterFails {
			a.note("the submitter fails")
			return "", a.finishSubmitterJob(false)
		}
		a.w.dash.submit(cluster, id, "submitter")
	case rayv1.SidecarMode:
		if _, err := a.await("the dashboard of "+cluster, dashboardUp); err != nil {
			return "", err
		}
		a.w.dash.submit(cluster, id, "sidecar")
	case rayv1.HTTPMode:
		if _, err := a.await("the operator to submit "+id, func(*rayv1.RayJob) bool {
			_, ok := a.w.dash.job(cluster, id)
			return ok
		}); err != nil {
			return "", err
		}
	case rayv1.InteractiveMode:
		if _, err := a.await("Waiting", func(job *rayv1.RayJob) bool {
			return job.Status.JobDeploymentStatus == rayv1.JobDeploymentStatusWaiting && dashboardUp(job)
		}); err != nil {
			return "", err
		}
		id = fmt.Sprintf("%s-user-%d", a.lc.name, i)
		a.w.dash.submit(cluster, id, "user")
		if err := a.updateSpec(func(job *rayv1.RayJob) { job.Spec.JobID = id }); err != nil {
			return "", err
		}
	}
	a.note("Ray job %s submitted", id)
	return id, nil
}

// whileRunning plays what the script does while the Ray job runs: it
// vanishes, the RayJob is suspended (then the attempt starts over:
// restart), or deleted. The user may first wait for the operator to see
// the job run.
func (a *actor) whileRunning(i int, cluster, id string) (restart bool, err error) {
	lc := a.lc
	late := i == 0 && lc.suspend == suspendLate && !a.suspended
	if lc.waitForOperator || (i == 0 && lc.vanish) {
		if _, err := a.await("the operator to see "+id+" RUNNING", func(job *rayv1.RayJob) bool {
			return job.Status.JobID == id && job.Status.JobStatus == rayv1.JobStatusRunning
		}); err != nil {
			return false, err
		}
	}
	switch {
	case i == 0 && lc.vanish:
		a.w.dash.forget(cluster, id)
		a.note("Ray job %s vanished", id)
		if _, err := a.await("the operator to resubmit "+id, func(*rayv1.RayJob) bool {
			_, ok := a.w.dash.job(cluster, id)
			return ok
		}); err != nil {
			return false, err
		}
		if !a.w.dash.move(cluster, id, rayv1.JobStatusRunning) {
			return false, a.ended(fmt.Errorf("resubmitted Ray job %s is not on the dashboard", id))
		}
	case late:
		return true, a.suspendAndResume(true)
	case lc.deleteEarly:
		a.note("delete while running")
		if err := a.w.c.Delete(a.ctx, a.key()); client.IgnoreNotFound(err) != nil {
			return false, err
		}
		return false, errDeleted
	}
	return false, nil
}

// end makes the Ray job end as out says, and its submitter with it.
func (a *actor) end(cluster, id string, out outcome) error {
	status := map[outcome]rayv1.JobStatus{succeed: rayv1.JobStatusSucceeded, fail: rayv1.JobStatusFailed, stop: rayv1.JobStatusStopped}[out]
	if !a.w.dash.move(cluster, id, status) {
		return a.ended(fmt.Errorf("Ray job %s is not on the dashboard of %s", id, cluster))
	}
	a.note("Ray job %s %s", id, status)
	pause(a.ctx, a.lc.pause())
	switch a.lc.mode {
	case rayv1.K8sJobMode:
		// `ray job logs --follow` exits 0 however the job ended.
		return a.finishSubmitterJob(true)
	case rayv1.SidecarMode:
		// `ray job submit` exits 1 when the job FAILED (Ray 2.7 and later).
		head := a.w.rec.headPod(cluster)
		if head == nil {
			return a.ended(fmt.Errorf("no head Pod for %s", cluster))
		}
		exit := int32(0)
		if out == fail {
			exit = 1
		}
		a.note("the sidecar exits %d", exit)
		return a.ended(testenv.TerminateContainer(a.ctx, a.w.c, head, submitter.ContainerName, exit, time.Now()))
	}
	return nil
}

// finishSubmitterJob plays the Job controller: the submitter Job ends.
func (a *actor) finishSubmitterJob(succeeded bool) error {
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: a.lc.name, Namespace: a.w.ns}}
	a.note("the submitter Job ends (succeeded %v)", succeeded)
	return a.ended(testenv.FinishJob(a.ctx, a.w.c, job, succeeded, time.Now()))
}

// suspendAndResume suspends the RayJob, waits for Suspended and resumes
// it; set says whether it must set spec.suspend (else it was created so).
func (a *actor) suspendAndResume(set bool) error {
	a.suspended = true
	if set {
		a.note("suspend")
		if err := a.updateSpec(func(job *rayv1.RayJob) { job.Spec.Suspend = true }); err != nil {
			return err
		}
	}
	if _, err := a.await("Suspended", func(job *rayv1.RayJob) bool {
		return job.Status.JobDeploymentStatus == rayv1.JobDeploymentStatusSuspended
	}); err != nil {
		return err
	}
	pause(a.ctx, a.lc.pause())
	a.note("resume")
	return a.updateSpec(func(job *rayv1.RayJob) { job.Spec.Suspend = false })
}

// finish checks the terminal state and the cleanup, then deletes the
// RayJob and waits until it is gone.
func (a *actor) finish() error {
	job, err := a.await("a terminal state", func(job *rayv1.RayJob) bool {
		return rayv1.IsJobDeploymentTerminal(job.Status.JobDeploymentStatus)
	})
	if err != nil {
		return err
	}
	a.note("terminal: %s/%q", job.Status.JobDeploymentStatus, job.Status.JobStatus)
	if err := a.lc.expect().check(&job.Status); err != nil {
		return err
	}
	if err := a.checkCleanup(&job.Status); err != nil {
		return err
	}
	if _, gone := a.w.rec.rayJobState(a.lc.name); !gone {
		a.note("delete")
		if err := a.w.c.Delete(a.ctx, a.key()); client.IgnoreNotFound(err) != nil {
			return err
		}
	}
	return a.awaitGone()
}

// checkCleanup waits for what the RayJob's cleanup does to the finished
// RayJob's cluster, read from the API server. That nothing is deleted is
// only checked as things are when the user gets there: proving an absence
// would take waiting. A RayJob that hit its deadline may have ended before
// its cluster was created.
func (a *actor) checkCleanup(status *rayv1.RayJobStatus) error {
	effect := a.lc.cleanupFor(status)
	name := status.RayClusterName
	a.note("cleanup: %s", effect)
	mayBeMissing := a.lc.deadline != nil
	switch effect {
	case deleteRayJob:
		return a.awaitGone()
	case deleteCluster:
		if err := a.awaitCondition("RayCluster "+name+" to be deleted", func() bool {
			c, err := a.getCluster(name)
			return c == nil && err == nil
		}); err != nil {
			return err
		}
		if a.lc.mode == rayv1.K8sJobMode && !mayBeMissing && a.w.rec.batchJob(a.lc.name) == nil {
			return errors.New("the submitter Job was deleted with the cluster; it is kept for its logs")
		}
	case suspendWorkers:
		return a.awaitCondition("the worker groups of "+name+" to be suspended", func() bool {
			c, err := a.getCluster(name)
			return err == nil && (c != nil && allSuspended(c) || c == nil && mayBeMissing)
		})
	case keepEverything:
		c, err := a.getCluster(name)
		if err != nil {
			return err
		}
		if c == nil && !mayBeMissing || c != nil && allSuspended(c) {
			return fmt.Errorf("RayCluster %s was cleaned up (exists: %v) though no cleanup applies", name, c != nil)
		}
	}
	return nil
}

// getCluster reads a RayCluster from the API server; nil when there is none.
func (a *actor) getCluster(name string) (*rayv1.RayCluster, error) {
	c := &rayv1.RayCluster{}
	if err := a.w.c.Get(a.ctx, client.ObjectKey{Namespace: a.w.ns, Name: name}, c); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	return c, nil
}

func allSuspended(c *rayv1.RayCluster) bool {
	for _, g := range c.Spec.WorkerGroupSpecs {
		if !ptr.Deref(g.Suspend, false) {
			return false
		}
	}
	return true
}

// awaitGone waits until the RayJob is gone: its finalizer was removed.
func (a *actor) awaitGone() error {
	err := a.awaitCondition("the RayJob to be gone", func() bool {
		_, gone := a.w.rec.rayJobState(a.lc.name)
		return gone
	})
	if err == nil {
		a.note("gone")
	}
	return err
}

// awaitCondition polls cond until it holds, for at most stepTimeout.
func (a *actor) awaitCondition(what string, cond func() bool) error {
	err := wait.PollUntilContextTimeout(a.ctx, 100*time.Millisecond, stepTimeout, true, func(context.Context) (bool, error) {
		return cond(), nil
	})
	switch {
	case err == nil:
		return nil
	case a.ctx.Err() != nil:
		return a.ctx.Err()
	}
	job, gone := a.w.rec.rayJobState(a.lc.name)
	state := "never seen"
	if job != nil {
		state = fmt.Sprintf("%s/%q, deleted %v", job.Status.JobDeploymentStatus, job.Status.JobStatus, gone)
	}
	return fmt.Errorf("waited %v for %s (RayJob %s)", stepTimeout, what, state)
}

// await polls what the watches recorded until done holds for the RayJob
// (its last state, even once deleted). It gives up with errEnded when the
// RayJob ends first (whether or not it was deleted since), with an error
// when it is deleted before it ended, and after stepTimeout.
func (a *actor) await(what string, done func(*rayv1.RayJob) bool) (*rayv1.RayJob, error) {
	var job *rayv1.RayJob
	err := wait.PollUntilContextTimeout(a.ctx, 50*time.Millisecond, stepTimeout, true, func(context.Context) (bool, error) {
		var gone bool
		job, gone = a.w.rec.rayJobState(a.lc.name)
		switch {
		case job == nil:
			return false, nil
		case done(job):
			return true, nil
		case rayv1.IsJobDeploymentTerminal(job.Status.JobDeploymentStatus):
			// Also when it is gone since: a deletion rule may delete a
			// RayJob that ended between two polls.
			return false, errEnded
		case gone:
			return false, fmt.Errorf("the RayJob is gone while waiting for %s", what)
		}
		return false, nil
	})
	switch {
	case err == nil:
		return job, nil
	case a.ctx.Err() != nil:
		return job, a.ctx.Err()
	case !wait.Interrupted(err):
		return job, err // gone, or errEnded
	}
	state := "never seen"
	if job != nil {
		state = fmt.Sprintf("%s/%q", job.Status.JobDeploymentStatus, job.Status.JobStatus)
	}
	return job, fmt.Errorf("waited %v for %s (RayJob %s)", stepTimeout, what, state)
}

// updateSpec applies mutate to the latest RayJob, retrying on conflicts
// with the operator's writes.
func (a *actor) updateSpec(mutate func(*rayv1.RayJob)) error {
	return retry.RetryOnConflict(conflictBackoff, func() error {
		job := &rayv1.RayJob{}
		if err := a.w.c.Get(a.ctx, client.ObjectKeyFromObject(a.key()), job); err != nil {
			return err
		}
		mutate(job)
		return a.w.c.Update(a.ctx, job)
	})
}

// key is the RayJob, by name.
func (a *actor) key() *rayv1.RayJob {
	return &rayv1.RayJob{ObjectMeta: metav1.ObjectMeta{Name: a.lc.name, Namespace: a.w.ns}}
}

// report is the lifecycle's plan, trace and status history.
func (a *actor) report() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%v\nsteps:\n  %s\nRayJob statuses:\n%s", a.lc, strings.Join(a.trace, "\n  "), a.w.rec.history(a.lc.name))
	return b.String()
}
