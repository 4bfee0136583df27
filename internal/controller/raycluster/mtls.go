package raycluster

import (
	"context"
	"errors"
	"fmt"
	"time"

	certmanagerv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/childwrite"
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
// feature is turned off on a live cluster; so are creating and deleting
// the Secrets of the certificates the operator issues itself.
//
// +kubebuilder:rbac:groups=cert-manager.io,resources=issuers,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups=cert-manager.io,resources=certificates,verbs=get;list;watch;create;update;delete
// +kubebuilder:rbac:groups=cert-manager.io,resources=certificates/status,verbs=get
// +kubebuilder:rbac:groups=core,resources=secrets,verbs=get;list;watch;create;update;delete

const certificateKind = "Certificate"

// errNoCertManager is KubeRay's refusal of a cluster asking for mutual TLS
// where cert-manager is not installed.
// Clusters whose certificates the operator issues need no cert-manager.
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

// mtlsWaitRequeue is how soon a cluster waiting for its certificates is
// looked at again when no Certificate event comes first (KubeRay: 30 s).
const mtlsWaitRequeue = 10 * time.Second

// mtlsExpiryWarning is KubeRay's: certificates closer to their expiry get
// an MTLSCertificateExpiringSoon warning.
const mtlsExpiryWarning = 24 * time.Hour

// mtlsSource is where the cluster's certificates come from.
func (r *Reconciler) mtlsSource(c *rayv1.RayCluster) string {
	return raytls.Source(c, r.opts.MTLSCertificates)
}

// reconcileMTLS makes the cluster's PKI (feature gate RayClusterMTLS): with
// spec.tlsOptions.enabled, through cert-manager (KubeRay's way) or issued
// by the operator, then reports whether it is ready; otherwise it deletes
// what the cluster controls. With the gate off it does nothing; without
// cert-manager's API a cert-manager cluster is refused by validation. It
// runs before the Pods, which wait for the Secrets.
func (r *Reconciler) reconcileMTLS(ctx context.Context, s *scope) (passsteps.Result, error) {
	if !r.opts.Features.Enabled(features.RayClusterMTLS) {
		return passsteps.Result{}, nil
	}
	if !r.mtlsEnabled(s.cluster) {
		return passsteps.Result{}, r.deleteMTLSObjects(ctx, s, true)
	}
	var res passsteps.Result
	if r.mtlsSource(s.cluster) == raytls.SourceOperator {
		var err error
		if res, err = r.reconcileOperatorPKI(ctx, s); err != nil {
			r.events.Eventf(s.cluster, nil, corev1.EventTypeWarning, reasonMTLSFailedToReconcile, actionReconcile,
				"Failed to reconcile mTLS certificates: %v", err)
			return res, err
		}
		// cert-manager's objects of an earlier choice go once the Secrets
		// are the operator's.
		if err := r.deleteMTLSObjects(ctx, s, false); err != nil {
			return res, err
		}
	} else if err := r.reconcileCertManagerPKI(ctx, s); err != nil {
		return res, err
	}
	return res.Merge(r.reportPKI(ctx, s)), nil
}

// leafCertificates are the head's and the workers' leaf Certificate specs,
// in that order, naming the Pods' IPs (one Pod list for both). Both the
// cert-manager path and the operator-issued one start from them.
func (r *Reconciler) leafCertificates(ctx context.Context, c *rayv1.RayCluster) ([]*certmanagerv1.Certificate, error) {
	pods, err := r.listPods(ctx, c, nil)
	if err != nil {
		return nil, err
	}
	fqdn := naming.HeadServiceFQDN(c, r.opts.Pod.ClusterDomain)
	return []*certmanagerv1.Certificate{
		raytls.LeafCertificate(c, rayv1.HeadNode, fqdn, raytls.PodIPs(pods, rayv1.HeadNode)),
		raytls.LeafCertificate(c, rayv1.WorkerNode, fqdn, raytls.PodIPs(pods, rayv1.WorkerNode)),
	}, nil
}

// reconcileCertManagerPKI makes KubeRay's cert-manager objects in its order:
// the self-signed Issuer, the CA Certificate, the CA Issuer and the head
// and worker Certificates, each Secret owned by its Certificate.
func (r *Reconciler) reconcileCertManagerPKI(ctx context.Context, s *scope) error {
	if r.opts.CertManagerMissing {
		return nil
	}
	for _, step := range r.mtlsSteps(s.cluster) {
		if err := step.run(ctx, s); err != nil {
			r.events.Eventf(s.cluster, nil, corev1.EventTypeWarning, reasonMTLSFailedToReconcile, actionReconcile,
				"Failed to reconcile mTLS %s: %v", step.name, err)
			return err
		}
	}
	return nil
}

// reportPKI checks, once per pass, that the leaf certificates are issued:
// while they are not, an MTLSCertsNotReady event and a requeue (Pods are
// not created meanwhile); then an MTLSPKIReady event and a warning for any
// certificate that expires within a day, as KubeRay's.
func (r *Reconciler) reportPKI(ctx context.Context, s *scope) passsteps.Result {
	if err := r.mtlsReady(ctx, s); err != nil {
		issuer := "cert-manager"
		if r.mtlsSource(s.cluster) == raytls.SourceOperator {
			issuer = "the operator"
		}
		r.events.Eventf(s.cluster, nil, corev1.EventTypeNormal, reasonMTLSCertsNotReady, actionReconcile,
			"Waiting for %s to issue mTLS certificates", issuer)
		return passsteps.Requeue(mtlsWaitRequeue)
	}
	r.events.Eventf(s.cluster, nil, corev1.EventTypeNormal, reasonMTLSPKIReady, actionReconcile,
		"mTLS PKI is ready: CA, head, and worker certificates issued")
	now := r.Clock.Now()
	for name, notAfter := range r.certificateExpiries(ctx, s) {
		if left := notAfter.Sub(now); left < mtlsExpiryWarning {
			r.events.Eventf(s.cluster, nil, corev1.EventTypeWarning, reasonMTLSCertificateExpiringSoon, actionReconcile,
				"TLS certificate %s expires in %.1f hours; Ray does not hot-reload certs so a pod restart will be needed after renewal",
				name, left.Hours())
		}
	}
	return passsteps.Result{}
}

// certificateExpiries are the expiry times of the head, worker and CA
// certificates by Certificate name: those the operator issued or read this
// pass, or cert-manager's Certificate statuses; unknown ones are left out.
func (r *Reconciler) certificateExpiries(ctx context.Context, s *scope) map[string]time.Time {
	if s.mtlsExpiries != nil {
		return s.mtlsExpiries
	}
	c := s.cluster
	out := map[string]time.Time{}
	for _, name := range []string{
		naming.TLSCertificateName(c.Name, rayv1.HeadNode), naming.TLSCertificateName(c.Name, rayv1.WorkerNode),
		naming.TLSCACertificateName(c.Name),
	} {
		cert := &certmanagerv1.Certificate{}
		if err := r.Client.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: name}, cert); err == nil && cert.Status.NotAfter != nil {
			out[name] = cert.Status.NotAfter.Time
		}
	}
	return out
}

// deleteMTLSObjects deletes the Certificates and Issuers the cluster
// controls (the Secrets cert-manager wrote follow through their owner
// references) and, with secrets, the Secrets the operator issued. Without
// cert-manager's API there are no Certificates or Issuers.
func (r *Reconciler) deleteMTLSObjects(ctx context.Context, s *scope, secrets bool) error {
	objs, err := r.certManagerObjects(ctx, s.cluster)
	if err != nil {
		return err
	}
	if secrets {
		if objs, err = r.appendPKISecrets(ctx, s.cluster, objs); err != nil {
			return err
		}
	}
	for _, o := range objs {
		if !metav1.IsControlledBy(o, s.cluster) {
			continue
		}
		if err := r.Children().Delete(ctx, s.cluster, o, childwrite.Event{}, childwrite.RawError()); err != nil {
			return err
		}
	}
	return nil
}

// certManagerObjects are the cluster's Certificates and Issuers, none when
// the API server does not serve cert-manager's API.
func (r *Reconciler) certManagerObjects(ctx context.Context, c *rayv1.RayCluster) ([]client.Object, error) {
	if r.opts.CertManagerMissing {
		return nil, nil
	}
	sel := []client.ListOption{client.InNamespace(c.Namespace), client.MatchingLabels(raytls.SelectorLabels(c.Name))}
	certs := &certmanagerv1.CertificateList{}
	issuers := &certmanagerv1.IssuerList{}
	for _, list := range []client.ObjectList{certs, issuers} {
		if err := r.Client.List(ctx, list, sel...); err != nil {
			if apimeta.IsNoMatchError(err) {
				return nil, nil
			}
			return nil, err
		}
	}
	var objs []client.Object
	for i := range certs.Items {
		objs = append(objs, &certs.Items[i])
	}
	for i := range issuers.Items {
		objs = append(objs, &issuers.Items[i])
	}
	return objs, nil
}

// appendPKISecrets adds the cluster's PKI Secrets that exist to objs.
func (r *Reconciler) appendPKISecrets(ctx context.Context, c *rayv1.RayCluster, objs []client.Object) ([]client.Object, error) {
	for _, name := range raytls.PKISecretNames(c) {
		secret := &corev1.Secret{}
		err := r.LiveReader.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: name}, secret)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		objs = append(objs, secret)
	}
	return objs, nil
}

// errMTLSNotReady holds Pod creation back until both leaf certificates are
// issued; the Pods step turns it into a requeue.
var errMTLSNotReady = errors.New("mTLS secrets not ready")

// mtlsReady reports, once per pass, whether the head and worker
// certificates are issued: for cert-manager, their Certificates are Ready
// at their generation; and their Secrets hold the certificate, key and CA.
// Pods mounting them are created only then.
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
		if r.mtlsSource(c) == raytls.SourceCertManager {
			cert := &certmanagerv1.Certificate{}
			name := naming.TLSCertificateName(c.Name, t)
			if err := r.Client.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: name}, cert); err != nil {
				return fmt.Errorf("%w: certificate %s not found: %w", errMTLSNotReady, name, err)
			}
			if !raytls.Ready(cert) {
				return fmt.Errorf("%w: certificate %s is not ready at current generation %d", errMTLSNotReady, name, cert.Generation)
			}
		}
		secret := &corev1.Secret{}
		name := naming.TLSSecretName(c.Name, t)
		if err := r.LiveReader.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: name}, secret); err != nil {
			return fmt.Errorf("%w: secret %s not found: %w", errMTLSNotReady, name, err)
		}
		if k := raytls.MissingKey(secret); k != "" {
			return fmt.Errorf("%w: secret %s missing required key %s", errMTLSNotReady, name, k)
		}
	}
	return nil
}
