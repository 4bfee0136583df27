package rayjob

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/dashboard"
	"github.com/ray-operator/ray-operator/internal/naming"
	"github.com/ray-operator/ray-operator/internal/submitter"
)

// dashboardURL returns "<head service FQDN>:<dashboard port>" of a ready
// cluster, read from its head Service.
func (r *Reconciler) dashboardURL(ctx context.Context, cluster *rayv1.RayCluster) (string, error) {
	svc := &corev1.Service{}
	key := client.ObjectKey{Namespace: cluster.Namespace, Name: naming.HeadServiceName(cluster)}
	if err := r.Client.Get(ctx, key, svc); err != nil {
		return "", fmt.Errorf("getting the head Service of RayCluster %s/%s: %w", cluster.Namespace, cluster.Name, err)
	}
	for _, port := range svc.Spec.Ports {
		if port.Name == rayv1.DashboardPortName {
			return fmt.Sprintf("%s:%d", naming.HeadServiceFQDN(cluster, r.opts.ClusterDomain), port.Port), nil
		}
	}
	return "", fmt.Errorf("head Service %s has no %q port", key, rayv1.DashboardPortName)
}

// dashboardClient returns a client of the job's dashboard, with the
// cluster's auth token when it has one.
func (r *Reconciler) dashboardClient(ctx context.Context, job *rayv1.RayJob, cluster *rayv1.RayCluster) (dashboard.Client, error) {
	token, err := r.authToken(ctx, cluster)
	if err != nil {
		return nil, err
	}
	return r.Dashboards(job.Status.DashboardURL, token)
}

// authToken reads the token of a token-protected cluster from its auth
// Secret; other clusters need none.
func (r *Reconciler) authToken(ctx context.Context, cluster *rayv1.RayCluster) (string, error) {
	if cluster == nil || !submitter.AuthEnabled(cluster) {
		return "", nil
	}
	secret := &corev1.Secret{}
	key := client.ObjectKey{Namespace: cluster.Namespace, Name: naming.AuthSecretName(cluster)}
	if err := r.Client.Get(ctx, key, secret); err != nil {
		return "", fmt.Errorf("getting the auth Secret of RayCluster %s/%s: %w", cluster.Namespace, cluster.Name, err)
	}
	return string(secret.Data[submitter.AuthTokenSecretKey]), nil
}

// jobInfo asks the dashboard about the RayJob's Ray job.
func (r *Reconciler) jobInfo(ctx context.Context, job *rayv1.RayJob, cluster *rayv1.RayCluster) (*dashboard.JobInfo, error) {
	dash, err := r.dashboardClient(ctx, job, cluster)
	if err != nil {
		return nil, err
	}
	return dash.GetJobInfo(ctx, job.Status.JobID)
}

// submitOverHTTP submits the Ray job through the dashboard (HTTPMode). The
// submission id makes it idempotent: an id Ray already knows is success.
func (r *Reconciler) submitOverHTTP(ctx context.Context, job *rayv1.RayJob, cluster *rayv1.RayCluster) error {
	req, err := dashboard.NewJobSubmitRequest(job)
	if err != nil {
		return err
	}
	dash, err := r.dashboardClient(ctx, job, cluster)
	if err != nil {
		return err
	}
	if _, err := dash.SubmitJob(ctx, req); err != nil && !errors.Is(err, dashboard.ErrSubmissionIDInUse) {
		r.event(job, corev1.EventTypeWarning, reasonFailedToSubmitJob, actionSubmit, "Failed to submit Ray job %s: %v", job.Status.JobID, err)
		return fmt.Errorf("submitting Ray job %s: %w", job.Status.JobID, err)
	}
	r.event(job, corev1.EventTypeNormal, reasonSubmittedJob, actionSubmit, "Submitted Ray job %s to %s", job.Status.JobID, job.Status.DashboardURL)
	return nil
}
