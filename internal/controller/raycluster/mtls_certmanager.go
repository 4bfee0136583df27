package raycluster

import (
	"context"
	"fmt"

	certmanagerv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/childwrite"
	"github.com/ray-operator/ray-operator/internal/raytls"
)

type mtlsStep struct {
	name string
	run  func(context.Context, *scope) error
}

// mtlsSteps are KubeRay's, in its order.
func (r *Reconciler) mtlsSteps(c *rayv1.RayCluster) []mtlsStep {
	issuers := raytls.Issuers(c)
	var leaves []*certmanagerv1.Certificate
	leaf := func(i int) func(context.Context, *scope) error {
		return func(ctx context.Context, s *scope) error {
			if leaves == nil {
				var err error
				if leaves, err = r.leafCertificates(ctx, c); err != nil {
					return err
				}
			}
			return r.applyCertificate(ctx, s, leaves[i], true)
		}
	}
	return []mtlsStep{
		{"self-signed issuer", func(ctx context.Context, s *scope) error { return r.createIssuer(ctx, s, issuers[0]) }},
		{"CA certificate", func(ctx context.Context, s *scope) error {
			return r.applyCertificate(ctx, s, raytls.CACertificate(c), false)
		}},
		{"CA issuer", func(ctx context.Context, s *scope) error { return r.createIssuer(ctx, s, issuers[1]) }},
		{"head certificate", leaf(0)},
		{"worker certificate", leaf(1)},
	}
}

// createIfMissing creates obj; one that already exists is left alone.
func (r *Reconciler) createIfMissing(ctx context.Context, s *scope, obj client.Object) error {
	return r.Children().Create(ctx, s.cluster, obj, childwrite.Event{}, childwrite.IgnoreAlreadyExists(), childwrite.RawError())
}

// createIssuer creates the Issuer unless it exists: its spec never changes.
func (r *Reconciler) createIssuer(ctx context.Context, s *scope, issuer *certmanagerv1.Issuer) error {
	err := r.Client.Get(ctx, client.ObjectKeyFromObject(issuer), &certmanagerv1.Issuer{})
	if apierrors.IsNotFound(err) {
		return r.createIfMissing(ctx, s, issuer)
	}
	return err
}

// applyCertificate creates the Certificate, or, for a leaf (update), brings
// its labels and SANs to desired's, then owns its Secret by it.
func (r *Reconciler) applyCertificate(ctx context.Context, s *scope, desired *certmanagerv1.Certificate, update bool) error {
	existing := &certmanagerv1.Certificate{}
	err := r.Client.Get(ctx, client.ObjectKeyFromObject(desired), existing)
	if apierrors.IsNotFound(err) {
		return r.createIfMissing(ctx, s, desired)
	}
	if err != nil {
		return err
	}
	if update && !raytls.LeafUpToDate(existing, desired) {
		existing.Labels, existing.Spec = desired.Labels, desired.Spec
		existing.OwnerReferences = desired.OwnerReferences
		err := r.Children().Update(ctx, s.cluster, existing, childwrite.Event{Reason: reasonMTLSCertificatesUpdated,
			Note: fmt.Sprintf("Updated %s SANs (IPs: %v)", raytls.Noun(desired), desired.Spec.IPAddresses)}, childwrite.RawError())
		if err != nil {
			return err
		}
	}
	return r.ownSecret(ctx, s, existing)
}

// ownSecret gives the Certificate's Secret, once cert-manager wrote it, an
// owner reference to the Certificate, so that it goes with it. The Secret
// carries none of the cache's labels: it is read from the API server.
func (r *Reconciler) ownSecret(ctx context.Context, s *scope, cert *certmanagerv1.Certificate) error {
	secret := &corev1.Secret{}
	err := r.LiveReader.Get(ctx, client.ObjectKey{Namespace: cert.Namespace, Name: cert.Spec.SecretName}, secret)
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
	return r.Children().Update(ctx, s.cluster, secret, childwrite.Event{}, childwrite.RawError())
}
