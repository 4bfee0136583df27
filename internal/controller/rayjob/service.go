package rayjob

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/naming"
)

// reconcileHeadService keeps "<rayjob>-head-svc", a Service with a name that
// does not change across retries, pointing at the head of the RayJob's
// current cluster. It mirrors the cluster's own head Service; a selected
// cluster (clusterSelector) gets none.
func (r *Reconciler) reconcileHeadService(ctx context.Context, job *rayv1.RayJob, cluster *rayv1.RayCluster) error {
	if usesClusterSelector(job) {
		return nil
	}
	clusterSvc := &corev1.Service{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: cluster.Namespace, Name: naming.HeadServiceName(cluster)}, clusterSvc); err != nil {
		return client.IgnoreNotFound(err)
	}
	desired, err := r.jobHeadService(job, clusterSvc)
	if err != nil {
		return err
	}
	current := &corev1.Service{}
	err = r.Client.Get(ctx, client.ObjectKeyFromObject(desired), current)
	switch {
	case apierrors.IsNotFound(err):
		return r.createJobHeadService(ctx, job, desired)
	case err != nil:
		return err
	case current.Spec.Selector[rayv1.LabelCluster] == desired.Spec.Selector[rayv1.LabelCluster]:
		return nil
	}
	// A retry created a new cluster: point the Service at it, keeping the
	// immutable ClusterIP.
	desired.Spec.ClusterIP, desired.Spec.ClusterIPs = current.Spec.ClusterIP, current.Spec.ClusterIPs
	current.Spec = desired.Spec
	if err := r.Client.Update(ctx, current); err != nil {
		return fmt.Errorf("updating Service %s: %w", client.ObjectKeyFromObject(current), err)
	}
	r.event(job, corev1.EventTypeNormal, reasonUpdatedService, actionUpdate, "Updated the service %s/%s", current.Namespace, current.Name)
	return nil
}

// createJobHeadService creates the RayJob's head Service.
func (r *Reconciler) createJobHeadService(ctx context.Context, job *rayv1.RayJob, svc *corev1.Service) error {
	if err := r.Client.Create(ctx, svc); err != nil {
		r.event(job, corev1.EventTypeWarning, reasonFailedToCreateService, actionCreate, "Failed to create the service %s/%s, %v", svc.Namespace, svc.Name, err)
		return fmt.Errorf("creating Service %s/%s: %w", svc.Namespace, svc.Name, err)
	}
	r.event(job, corev1.EventTypeNormal, reasonCreatedService, actionCreate, "Created the service %s/%s", svc.Namespace, svc.Name)
	return nil
}

// jobHeadService builds the RayJob's head Service from the cluster's.
func (r *Reconciler) jobHeadService(job *rayv1.RayJob, clusterSvc *corev1.Service) (*corev1.Service, error) {
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{
			Name:      naming.OwnerHeadServiceName(job.Name),
			Namespace: job.Namespace,
			Labels: map[string]string{
				rayv1.LabelOriginatedFromCRName: job.Name,
				rayv1.LabelOriginatedFromCRD:    OriginatedFromRayJob,
				rayv1.LabelNodeType:             string(rayv1.HeadNode),
				rayv1.LabelIdentifier:           naming.Identifier(job.Name, rayv1.HeadNode),
			},
			Annotations: clusterSvc.Annotations,
		},
		Spec: corev1.ServiceSpec{
			Type:     clusterSvc.Spec.Type,
			Selector: clusterSvc.Spec.Selector,
			Ports:    slices.Clone(clusterSvc.Spec.Ports),
		},
	}
	if clusterSvc.Spec.ClusterIP == corev1.ClusterIPNone {
		svc.Spec.ClusterIP = corev1.ClusterIPNone
	}
	for i := range svc.Spec.Ports {
		svc.Spec.Ports[i].NodePort = 0
	}
	if err := controllerutil.SetControllerReference(job, svc, r.Scheme); err != nil {
		return nil, err
	}
	return svc, nil
}
