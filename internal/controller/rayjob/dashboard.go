package rayjob

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/dashboard"
	"github.com/ray-operator/ray-operator/internal/naming"
	"github.com/ray-operator/ray-operator/internal/raypod"
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
	token, err := r.authToken(ctx, job, cluster)
	if err != nil {
		return nil, err
	}
	return r.Dashboards(job.Status.DashboardURL, token)
}

// authToken reads the token of a token-protected cluster from the Secret its
// Ray Pods read it from: authOptions.secretName, or the Secret the operator
// generates for the cluster. Other clusters need none. A missing Secret or
// key is an error and a warning event on the RayJob: without the token every
// dashboard call would be refused. The Secret is read uncached (see
// Deps.LiveReader), so a user's Secret without the operator's label is found.
func (r *Reconciler) authToken(ctx context.Context, job *rayv1.RayJob, cluster *rayv1.RayCluster) (string, error) {
	if cluster == nil || !rayv1.IsAuthEnabled(&cluster.Spec) {
		return "", nil
	}
	key := client.ObjectKey{Namespace: cluster.Namespace, Name: naming.AuthSecretName(cluster)}
	secret := &corev1.Secret{}
	if err := r.LiveReader.Get(ctx, key, secret); err != nil {
		if apierrors.IsNotFound(err) {
			r.event(job, corev1.EventTypeWarning, reasonAuthSecretNotFound, actionGet,
				"RayCluster %s/%s has token authentication, but its auth Secret %s is not found", cluster.Namespace, cluster.Name, key)
		}
		return "", fmt.Errorf("getting the auth Secret %s of RayCluster %s/%s: %w", key, cluster.Namespace, cluster.Name, err)
	}
	token := secret.Data[raypod.AuthTokenSecretKey]
	if len(token) == 0 {
		r.event(job, corev1.EventTypeWarning, reasonAuthSecretNotFound, actionGet,
			"The auth Secret %s of RayCluster %s/%s has no %q key", key, cluster.Namespace, cluster.Name, raypod.AuthTokenSecretKey)
		return "", fmt.Errorf("the auth Secret %s of RayCluster %s/%s has no %q key", key, cluster.Namespace, cluster.Name, raypod.AuthTokenSecretKey)
	}
	return string(token), nil
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
