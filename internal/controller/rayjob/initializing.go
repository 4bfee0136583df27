package rayjob

import (
	"context"

	ctrl "sigs.k8s.io/controller-runtime"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/passsteps"
)

// reconcileInitializing hands the RayJob to the batch scheduler, brings up
// its cluster and, once it is
// ready, records the dashboard URL and starts the submission: Waiting in
// InteractiveMode, Running otherwise (after creating the submitter Job in
// K8sJobMode; HTTPMode submits from Running, SidecarMode's submitter is
// already in the head Pod).
func (r *Reconciler) reconcileInitializing(ctx context.Context, s *scope) (passsteps.Result, error) {
	job := s.job
	if suspendIfRequested(job) || r.failIfActiveDeadlinePassed(job) || r.failIfPreRunningDeadlinePassed(job) {
		return requeue()
	}
	if proceed, err := r.submitToBatchScheduler(ctx, job); !proceed {
		if err != nil {
			return passsteps.Result{}, err
		}
		return requeue()
	}
	cluster, err := r.getOrCreateCluster(ctx, job)
	if err != nil {
		return passsteps.Result{}, err
	}
	if job.Status.DashboardURL == "" {
		ready, err := r.clusterReadyForJob(ctx, job, cluster)
		if err != nil {
			return passsteps.Result{}, err
		}
		if !ready {
			ctrl.LoggerFrom(ctx).Info("Waiting for the RayCluster to be ready", "rayCluster", cluster.Name, "state", cluster.Status.State)
			job.Status.RayClusterStatus = cluster.Status
			return requeue()
		}
		job.Status.DashboardURL = r.dashboards.URL(cluster)
	}
	switch job.Spec.SubmissionMode {
	case rayv1.InteractiveMode:
		job.Status.JobDeploymentStatus = rayv1.JobDeploymentStatusWaiting
		return requeue()
	case rayv1.K8sJobMode, "":
		if err := r.createSubmitterJobIfNeeded(ctx, job, cluster); err != nil {
			return passsteps.Result{}, err
		}
	}
	job.Status.JobDeploymentStatus = rayv1.JobDeploymentStatusRunning
	return requeue()
}

// clusterReadyForJob reports whether the RayJob may go on with its
// cluster: once the cluster is Ready, as in KubeRay, and in SidecarMode
// also once the head Pod's submitter container has ended. That happens when
// the Ray job ran before the cluster was seen Ready (its workers still
// starting, or the operator down meanwhile), and then the cluster never
// will be: a head Pod with an exited container is not Ready. KubeRay waits
// forever there; Running reads how the submitter and the job ended.
func (r *Reconciler) clusterReadyForJob(ctx context.Context, job *rayv1.RayJob, cluster *rayv1.RayCluster) (bool, error) {
	if cluster.Status.State == rayv1.Ready {
		return true, nil
	}
	if job.Spec.EffectiveSubmissionMode() != rayv1.SidecarMode {
		return false, nil
	}
	head, err := r.headPod(ctx, cluster)
	if err != nil || head == nil {
		return false, err
	}
	status := sidecarStatus(head)
	return status != nil && status.State.Terminated != nil, nil
}

// suspendIfRequested starts suspending a RayJob whose spec.suspend is set.
// Only Initializing and Running may suspend; Suspending then runs to the end
// whatever the flag becomes, which keeps suspension atomic.
func suspendIfRequested(job *rayv1.RayJob) bool {
	if !job.Spec.Suspend {
		return false
	}
	switch job.Status.JobDeploymentStatus {
	case rayv1.JobDeploymentStatusInitializing, rayv1.JobDeploymentStatusRunning:
		job.Status.JobDeploymentStatus = rayv1.JobDeploymentStatusSuspending
		return true
	}
	return false
}

// reconcileWaiting waits, in InteractiveMode, for the user to submit the job
// and put its submission id in spec.jobId.
//
// As in KubeRay, spec.suspend and activeDeadlineSeconds are not looked at
// here: KubeRay lets only Initializing and Running suspend, and checks the
// active deadline in those two states only. Neither is lost: both act on
// the first Running pass (the deadline counts from status.startTime, which
// Waiting does not move). preRunningDeadlineSeconds, whose purpose is to
// bound everything before Running, does fail a Waiting RayJob.
func (r *Reconciler) reconcileWaiting(_ context.Context, s *scope) (passsteps.Result, error) {
	job := s.job
	if r.failIfPreRunningDeadlinePassed(job) {
		return requeue()
	}
	if job.Spec.JobID == "" {
		return requeue()
	}
	job.Status.JobID = job.Spec.JobID
	job.Status.JobDeploymentStatus = rayv1.JobDeploymentStatusRunning
	return requeue()
}
