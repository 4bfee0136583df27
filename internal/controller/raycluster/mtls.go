package raycluster

import (
	"context"
	"errors"
	"fmt"

	certmanagerv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/features"
	"github.com/ray-operator/ray-operator/internal/naming"
	"github.com/ray-operator/ray-operator/internal/passsteps"
	"github.com/ray-operator/ray-operator/internal/raypod"
	"github.com/ray-operator/ray-operator/internal/raytls"
)

// KubeRay's mTLS role: Issuers are created once, Certificates created and
// updated (their SANs follow the Pod IPs), the Secrets cert-manager writes
// are read and given an owner reference to their Certificate. Deleting
// Issuers and Certificates is this operator's: it removes them when the
// feature is turned off on a live cluster.
//
// +kubebuilder:rbac:groups=cert-manager.io,resources=issuers,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups=cert-manager.io,resources=certificates,verbs=get;list;watch;create;update;delete
// +kubebuilder:rbac:groups=cert-manager.io,resources=certificates/status,verbs=get
// +kubebuilder:rbac:groups=core,resources=secrets,verbs=get;list;watch;update;delete

const certificateKind = "Certificate"

// errNoCertManager is KubeRay's refusal of a cluster asking for mutual TLS
// where cert-manager is not installed.
var errNoCertManager = errors.New("tlsOptions requires cert-manager, but cert-manager is not installed")

// watchMTLS watches the Issuers and Certificates the clusters own when the
// API server serves cert-manager's API; otherwise it records that it is
// missing (a watch of an unknown kind would keep the manager from
// starting), as KubeRay skips its mTLS controller then.
func (r *Reconciler) watchMTLS(mgr ctrl.Manager, b *builder.Builder) *builder.Builder {
	gk := schema.GroupKind{Group: certmanagerv1.SchemeGroupVersion.Group, Kind: certificateKind}
	if _, err := mgr.GetRESTMapper().RESTMapping(gk, certmanagerv1.SchemeGroupVersion.Version); err != nil {
		mgr.GetLogger().Info("cert-manager API not found; RayClusters with tlsOptions enabled will be refused", "error", err.Error())
		r.opts.CertManagerMissing = true
		return b
	}
	return b.Owns(&certmanagerv1.Issuer{}).Owns(&certmanagerv1.Certificate{})
}

// mtlsEnabled reports whether the cluster gets mutual TLS.
func (r *Reconciler) mtlsEnabled(cluster *rayv1.RayCluster) bool {
	return raypod.TLSEnabled(cluster, r.opts.Features.Enabled(features.RayClusterMTLS))
}

// reconcileMTLS makes the cluster's cert-manager objects (feature gate
// RayClusterMTLS): with spec.tlsOptions.enabled the self-signed Issuer,
// the CA Certificate, the CA Issuer and the head and worker Certificates,
// in KubeRay's order, each Secret owned by its Certificate; otherwise it
// deletes the ones the cluster controls. With the gate off, or without
// cert-manager's API (validation refuses such clusters), it does nothing.
// It runs before the Pods, which wait for the Secrets.
func (r *Reconciler) reconcileMTLS(ctx context.Context, s *scope) (passsteps.Result, error) {
	if !r.opts.Features.Enabled(features.RayClusterMTLS) || r.opts.CertManagerMissing {
		return passsteps.Result{}, nil
	}
	if !r.mtlsEnabled(s.cluster) {
		return passsteps.Result{}, r.deleteMTLSObjects(ctx, s)
	}
	for _, step := range r.mtlsSteps(s.cluster) {
		if err := step.run(ctx, s); err != nil {
			r.events.Eventf(s.cluster, nil, corev1.EventTypeWarning, reasonMTLSFailedToReconcile, actionReconcile,
				"Failed to reconcile mTLS %s: %v", step.name, err)
			return passsteps.Result{}, err
		}
	}
	return passsteps.Result{}, nil
}

type mtlsStep struct {
	name string
	run  func(context.Context, *scope) error
}

// mtlsSteps are KubeRay's, in its order.
func (r *Reconciler) mtlsSteps(c *rayv1.RayCluster) []mtlsStep {
	issuers := raytls.Issuers(c)
	leaf := func(t rayv1.RayNodeType) func(context.Context, *scope) error {
		return func(ctx context.Context, s *scope) error {
			pods, err := r.listPods(ctx, c, nil)
			if err != nil {
				return err
			}
			fqdn := naming.HeadServiceFQDN(c, r.opts.Pod.ClusterDomain)
			return r.applyCertificate(ctx, s, raytls.LeafCertificate(c, t, fqdn, raytls.PodIPs(pods, t)), true)
		}
	}
	return []mtlsStep{
		{"self-signed issuer", func(ctx context.Context, _ *scope) error { return r.createIssuer(ctx, issuers[0]) }},
		{"CA certificate", func(ctx context.Context, s *scope) error {
			return r.applyCertificate(ctx, s, raytls.CACertificate(c), false)
		}},
		{"CA issuer", func(ctx context.Context, _ *scope) error { return r.createIssuer(ctx, issuers[1]) }},
		{"head certificate", leaf(rayv1.HeadNode)},
		{"worker certificate", leaf(rayv1.WorkerNode)},
	}
}

// createIfMissing creates obj; one that already exists is left alone.
func (r *Reconciler) createIfMissing(ctx context.Context, obj client.Object) error {
	err := r.Client.Create(ctx, obj)
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	if err == nil {
		ctrl.LoggerFrom(ctx).Info("Created mTLS object", "object", klog.KObj(obj))
	}
	return err
}

// createIssuer creates the Issuer unless it exists: its spec never changes.
func (r *Reconciler) createIssuer(ctx context.Context, issuer *certmanagerv1.Issuer) error {
	err := r.Client.Get(ctx, client.ObjectKeyFromObject(issuer), &certmanagerv1.Issuer{})
	if apierrors.IsNotFound(err) {
		return r.createIfMissing(ctx, issuer)
	}
	return err
}

// applyCertificate creates the Certificate, or, for a leaf (update), brings
// its labels and SANs to desired's, then owns its Secret by it.
func (r *Reconciler) applyCertificate(ctx context.Context, s *scope, desired *certmanagerv1.Certificate, update bool) error {
	existing := &certmanagerv1.Certificate{}
	err := r.Client.Get(ctx, client.ObjectKeyFromObject(desired), existing)
	if apierrors.IsNotFound(err) {
		return r.createIfMissing(ctx, desired)
	}
	if err != nil {
		return err
	}
	if update && !raytls.LeafUpToDate(existing, desired) {
		existing.Labels, existing.Spec = desired.Labels, desired.Spec
		existing.OwnerReferences = desired.OwnerReferences
		if err := r.Client.Update(ctx, existing); err != nil {
			return err
		}
		r.events.Eventf(s.cluster, nil, corev1.EventTypeNormal, reasonMTLSCertificatesUpdated, actionUpdate,
			"Updated %s SANs (IPs: %v)", raytls.Noun(desired), desired.Spec.IPAddresses)
	}
	return r.ownSecret(ctx, existing)
}

// ownSecret gives the Certificate's Secret, once cert-manager wrote it, an
// owner reference to the Certificate, so that it goes with it. The Secret
// carries none of the cache's labels: it is read from the API server.
func (r *Reconciler) ownSecret(ctx context.Context, cert *certmanagerv1.Certificate) error {
	secret := &corev1.Secret{}
	err := r.liveReader().Get(ctx, client.ObjectKey{Namespace: cert.Namespace, Name: cert.Spec.SecretName}, secret)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, o := range secret.OwnerReferences {
		if o.UID == cert.UID {
			return nil
		}
	}
	secret.OwnerReferences = append(secret.OwnerReferences, metav1.OwnerReference{
		APIVersion: certmanagerv1.SchemeGroupVersion.String(), Kind: certificateKind, Name: cert.Name, UID: cert.UID,
	})
	return r.Client.Update(ctx, secret)
}

func (r *Reconciler) liveReader() client.Reader {
	if r.LiveReader != nil {
		return r.LiveReader
	}
	return r.Client
}

// deleteMTLSObjects deletes the Certificates and Issuers the cluster
// controls (their Secrets follow through their owner references). Without
// cert-manager's API there is nothing to delete.
func (r *Reconciler) deleteMTLSObjects(ctx context.Context, s *scope) error {
	sel := []client.ListOption{client.InNamespace(s.cluster.Namespace), client.MatchingLabels(raytls.SelectorLabels(s.cluster.Name))}
	certs := &certmanagerv1.CertificateList{}
	issuers := &certmanagerv1.IssuerList{}
	for _, list := range []client.ObjectList{certs, issuers} {
		if err := r.Client.List(ctx, list, sel...); err != nil {
			if apimeta.IsNoMatchError(err) {
				return nil
			}
			return err
		}
	}
	var objs []client.Object
	for i := range certs.Items {
		objs = append(objs, &certs.Items[i])
	}
	for i := range issuers.Items {
		objs = append(objs, &issuers.Items[i])
	}
	for _, o := range objs {
		if !metav1.IsControlledBy(o, s.cluster) {
			continue
		}
		if err := r.Client.Delete(ctx, o); client.IgnoreNotFound(err) != nil {
			return err
		}
		ctrl.LoggerFrom(ctx).Info("Deleted mTLS object, tlsOptions no longer enabled", "object", klog.KObj(o))
	}
	return nil
}

// errMTLSNotReady holds Pod creation back until cert-manager has issued
// both leaf certificates.
var errMTLSNotReady = errors.New("mTLS secrets not ready")

// mtlsReady reports, once per pass, whether the head and worker
// Certificates are Ready at their generation and their Secrets hold the
// certificate, key and CA. Pods mounting them are created only then.
func (r *Reconciler) mtlsReady(ctx context.Context, s *scope) error {
	if !r.mtlsEnabled(s.cluster) {
		return nil
	}
	if s.mtlsChecked {
		return s.mtlsErr
	}
	s.mtlsChecked = true
	s.mtlsErr = r.checkMTLSSecrets(ctx, s.cluster)
	if s.mtlsErr != nil {
		ctrl.LoggerFrom(ctx).Info("mTLS secrets not ready, holding back Pod creation", "error", s.mtlsErr.Error())
	}
	return s.mtlsErr
}

func (r *Reconciler) checkMTLSSecrets(ctx context.Context, c *rayv1.RayCluster) error {
	for _, t := range []rayv1.RayNodeType{rayv1.HeadNode, rayv1.WorkerNode} {
		cert := &certmanagerv1.Certificate{}
		name := naming.TLSCertificateName(c.Name, t)
		if err := r.Client.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: name}, cert); err != nil {
			return fmt.Errorf("%w: certificate %s not found: %w", errMTLSNotReady, name, err)
		}
		if !raytls.Ready(cert) {
			return fmt.Errorf("%w: certificate %s is not ready at current generation %d", errMTLSNotReady, name, cert.Generation)
		}
		secret := &corev1.Secret{}
		name = naming.TLSSecretName(c.Name, t)
		if err := r.liveReader().Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: name}, secret); err != nil {
			return fmt.Errorf("%w: secret %s not found: %w", errMTLSNotReady, name, err)
		}
		if k := raytls.MissingKey(secret); k != "" {
			return fmt.Errorf("%w: secret %s missing required key %s", errMTLSNotReady, name, k)
		}
	}
	return nil
}
