package faults_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/dashboard"
	"github.com/ray-operator/ray-operator/local/internal/e2eutil"
)

const (
	// faultEntrypoint runs a Ray task for a few seconds, so that a kill
	// can land while Ray runs the job.
	faultEntrypoint = `python -c "import time, ray; ray.init(); print('answer', ray.get(ray.remote(lambda: time.sleep(6) or 42).remote()))"`
	// ttlSeconds keeps the finished RayJob's cluster long enough to read
	// Ray's job list once more (a kill at Complete included).
	ttlSeconds = 15
	// interactiveSubmissionID is the id the InteractiveMode "user" submits
	// under.
	interactiveSubmissionID = "faults-interactive-1"
	// runTimeout bounds one RayJob from creation to its cluster's deletion.
	runTimeout = 6 * time.Minute
)

// TestRayJobUnderOperatorKills: a RayJob in each submission mode, with
// shutdownAfterJobFinishes, while the operator is SIGKILLed two or three
// times at seeded points (planKills) and started again, ends as if nothing
// happened: Ray lists exactly one job, under status.jobId, SUCCEEDED; the
// RayJob is Complete/SUCCEEDED; its RayCluster is deleted after the TTL;
// the K8sJobMode submitter Job is kept, finished, and no other mode has
// one.
func TestRayJobUnderOperatorKills(t *testing.T) {
	t.Parallel()
	for _, mode := range []rayv1.JobSubmissionMode{rayv1.K8sJobMode, rayv1.HTTPMode, rayv1.SidecarMode, rayv1.InteractiveMode} {
		t.Run(string(mode), func(t *testing.T) {
			t.Parallel()
			shared.runUnderKills(t, mode)
		})
	}
}

// runUnderKills runs one RayJob of mode under its seeded kill plan and
// checks how it ended.
func (s *suite) runUnderKills(t *testing.T, mode rayv1.JobSubmissionMode) {
	ns, op := s.namespaceWithOperator(t, func(ctx context.Context, ns string) { s.dump(ctx, t, ns) })
	plan := planKills(testRand(t, s.seed), mode)
	t.Logf("%s=%d: kill plan %v", seedEnv, s.seed, plan)
	ctx, cancel := context.WithTimeout(t.Context(), runTimeout)
	defer cancel()
	job := faultRayJob(ns, mode)
	o := newObserver(s, ns, job.Name)
	go o.run(ctx)
	if err := s.Client.Create(ctx, job); err != nil {
		t.Fatalf("creating RayJob: %v", err)
	}
	created := time.Now()
	userErr := make(chan error, 1)
	if mode == rayv1.InteractiveMode {
		go func() { userErr <- s.submitAsUser(ctx, o) }()
	}
	kills := killAlong(ctx, t, op, o, plan)
	if mode == rayv1.InteractiveMode {
		if err := <-userErr; err != nil {
			t.Fatal(err)
		}
	}
	done := waitFor(ctx, t, o, "the RayJob to finish", func(snap snapshot) bool {
		return snap.job != nil && rayv1.IsJobDeploymentTerminal(snap.job.Status.JobDeploymentStatus)
	}).job
	requireSucceeded(t, done)
	s.requireOneRayJob(ctx, t, done)
	duplicates := requireOnlySubmission(t, o, done.Status.JobID)
	waitFor(ctx, t, o, "the RayCluster's deletion after the TTL", func(snap snapshot) bool { return snap.clusterGone })
	s.requireSubmitterAsSpecified(ctx, t, done)
	if err := op.ExitedByItself(); err != nil {
		t.Fatal(err)
	}
	line := figures(o, done, kills, duplicates, time.Since(created))
	t.Log(line)
	fmt.Println(line)
}

// faultRayJob is a RayJob of mode with a head-only cluster (one Ray CPU)
// that runs faultEntrypoint and deletes its cluster ttlSeconds after it
// finished.
func faultRayJob(ns string, mode rayv1.JobSubmissionMode) *rayv1.RayJob {
	resources := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("2Gi")}
	job := &rayv1.RayJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "faults-" + modeSuffix(mode)},
		Spec: rayv1.RayJobSpec{
			SubmissionMode:           mode,
			Entrypoint:               faultEntrypoint,
			ShutdownAfterJobFinishes: true,
			TTLSecondsAfterFinished:  ttlSeconds,
			RayClusterSpec: &rayv1.RayClusterSpec{
				RayVersion: "2.52.0",
				HeadGroupSpec: rayv1.HeadGroupSpec{
					RayStartParams: map[string]string{},
					Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{
						Name: "ray-head", Image: "rayproject/ray:2.52.0",
						Resources: corev1.ResourceRequirements{Requests: resources, Limits: resources},
					}}}},
				},
			},
		},
	}
	if mode == rayv1.InteractiveMode {
		job.Spec.Entrypoint = ""
	}
	return job
}

// modeSuffix names a mode's RayJob.
func modeSuffix(mode rayv1.JobSubmissionMode) string {
	switch mode {
	case rayv1.K8sJobMode:
		return "k8sjob"
	case rayv1.HTTPMode:
		return "http"
	case rayv1.SidecarMode:
		return "sidecar"
	default:
		return "interactive"
	}
}

// submitAsUser does what an InteractiveMode user does: once the RayJob
// waits, submit faultEntrypoint to its dashboard under
// interactiveSubmissionID and put that id in spec.jobId.
func (s *suite) submitAsUser(ctx context.Context, o *observer) error {
	var waiting *rayv1.RayJob
	err := pollFast(ctx, func() (bool, error) {
		snap := o.snapshot()
		waiting = snap.job
		return waiting != nil && waiting.Status.JobDeploymentStatus == rayv1.JobDeploymentStatusWaiting, describe(snap)
	})
	if err != nil {
		return fmt.Errorf("waiting for the RayJob to wait for a job id: %w", err)
	}
	rc := &rayv1.RayCluster{}
	if err := s.Client.Get(ctx, types.NamespacedName{Namespace: waiting.Namespace, Name: waiting.Status.RayClusterName}, rc); err != nil {
		return err
	}
	c, err := s.proxy.Clients()(s.proxy.DashboardURL(rc), "")
	if err != nil {
		return err
	}
	// Retried until Ray knows the job: a call through the proxy can fail
	// after Ray took it, and Ray refuses a second job under the same id.
	err = e2eutil.Poll(ctx, e2eutil.PollInterval, func() (bool, error) {
		if _, err := c.GetJobInfo(ctx, interactiveSubmissionID); err == nil {
			return true, nil
		}
		_, err := c.SubmitJob(ctx, &dashboard.JobSubmitRequest{Entrypoint: faultEntrypoint, SubmissionID: interactiveSubmissionID})
		return err == nil, err
	})
	if err != nil {
		return fmt.Errorf("submitting as the user: %w", err)
	}
	patch := fmt.Appendf(nil, `{"spec":{"jobId":%q}}`, interactiveSubmissionID)
	if err := s.Client.Patch(ctx, waiting, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return fmt.Errorf("setting spec.jobId: %w", err)
	}
	return nil
}

// waitFor waits until cond holds for what o sees and returns that.
func waitFor(ctx context.Context, t *testing.T, o *observer, what string, cond func(snapshot) bool) snapshot {
	t.Helper()
	var snap snapshot
	err := pollFast(ctx, func() (bool, error) {
		snap = o.snapshot()
		return cond(snap), describe(snap)
	})
	if err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
	return snap
}

// pollFast polls at the observer's pace.
func pollFast(ctx context.Context, cond func() (bool, error)) error {
	return e2eutil.Poll(ctx, watchInterval, cond)
}

// requireSucceeded fails t unless the RayJob completed with SUCCEEDED.
func requireSucceeded(t *testing.T, job *rayv1.RayJob) {
	t.Helper()
	st := job.Status
	if st.JobStatus != rayv1.JobStatusSucceeded || st.JobDeploymentStatus != rayv1.JobDeploymentStatusComplete {
		t.Fatalf("RayJob ended %s/%s, reason %q (%s); want SUCCEEDED/Complete", st.JobStatus, st.JobDeploymentStatus, st.Reason, st.Message)
	}
}

// requireOneRayJob reads Ray's job list on the finished RayJob's cluster
// (kept for ttlSeconds): exactly one submitted job, the RayJob's, which
// succeeded.
func (s *suite) requireOneRayJob(ctx context.Context, t *testing.T, job *rayv1.RayJob) {
	t.Helper()
	jobs, err := s.rayJobs(ctx, job.Namespace, job.Status.RayClusterName)
	if err != nil {
		t.Fatalf("listing Ray's jobs on %s before its deletion: %v", job.Status.RayClusterName, err)
	}
	if len(jobs) != 1 || jobs[0].SubmissionID != job.Status.JobID || jobs[0].JobStatus != rayv1.JobStatusSucceeded {
		t.Fatalf("Ray lists %d submitted jobs %v; want exactly one, %q, SUCCEEDED", len(jobs), jobSummaries(jobs), job.Status.JobID)
	}
}

// requireOnlySubmission fails t unless the only submission id Ray ever
// listed while the test watched is id; it returns the number of others.
func requireOnlySubmission(t *testing.T, o *observer, id string) int {
	t.Helper()
	seen := o.submissionIDs()
	if _, ok := seen[id]; !ok || len(seen) != 1 {
		t.Errorf("Ray listed submission ids %v over the run; want only %q", keys(seen), id)
	}
	return len(seen) - 1
}

// requireSubmitterAsSpecified: in K8sJobMode the submitter Job is kept
// (shutdownAfterJobFinishes deletes the cluster only, as KubeRay), owned by
// the RayJob and succeeded; the other modes never have one.
func (s *suite) requireSubmitterAsSpecified(ctx context.Context, t *testing.T, job *rayv1.RayJob) {
	t.Helper()
	submitter := &batchv1.Job{}
	err := s.Client.Get(ctx, client.ObjectKeyFromObject(job), submitter)
	if job.Spec.SubmissionMode != rayv1.K8sJobMode {
		if !apierrors.IsNotFound(err) {
			t.Errorf("%s has no submitter Job, but getting Job %s says %v", job.Spec.SubmissionMode, job.Name, err)
		}
		return
	}
	if err != nil {
		t.Fatalf("the submitter Job after the cluster's deletion: %v", err)
	}
	if !metav1.IsControlledBy(submitter, job) || submitter.Status.Succeeded < 1 {
		t.Errorf("submitter Job: owners %v, succeeded %d, failed %d; want owned by the RayJob and succeeded",
			submitter.OwnerReferences, submitter.Status.Succeeded, submitter.Status.Failed)
	}
}

func jobSummaries(jobs []dashboard.JobInfo) []string {
	out := make([]string, 0, len(jobs))
	for _, j := range jobs {
		out = append(out, j.SubmissionID+"="+string(j.JobStatus))
	}
	return out
}

func keys(m map[string]dashboard.JobInfo) []string {
	out := make([]string, 0, len(m))
	for k, j := range m {
		out = append(out, k+"="+string(j.JobStatus))
	}
	return out
}

// dump prints the namespace's RayJobs, RayClusters and pods, and where the
// operator's logs are, when a test failed.
func (s *suite) dump(ctx context.Context, t *testing.T, ns string) {
	jobs := &rayv1.RayJobList{}
	if s.Client.List(ctx, jobs, client.InNamespace(ns)) == nil {
		for _, j := range jobs.Items {
			st := j.Status
			t.Logf("RayJob %s: %s/%s, jobId %q, cluster %q, reason %q, message %q", j.Name, st.JobDeploymentStatus, st.JobStatus, st.JobID, st.RayClusterName, st.Reason, st.Message)
		}
	}
	clusters := &rayv1.RayClusterList{}
	if s.Client.List(ctx, clusters, client.InNamespace(ns)) == nil {
		for _, c := range clusters.Items {
			t.Logf("RayCluster %s: state %s, deleting %v", c.Name, c.Status.State, c.DeletionTimestamp)
		}
	}
	pods := &corev1.PodList{}
	if s.Client.List(ctx, pods, client.InNamespace(ns)) == nil {
		for _, p := range pods.Items {
			t.Logf("pod %s: %s, containers %+v", p.Name, p.Status.Phase, p.Status.ContainerStatuses)
		}
	}
	t.Logf("operator logs: %s/operator-*.log", filepath.Join(s.StateDir, ns))
}
