package raycluster

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	certmanagerv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configv1alpha1 "github.com/ray-operator/ray-operator/api/config/v1alpha1"
	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/childwrite"
	"github.com/ray-operator/ray-operator/internal/clusterpki"
	"github.com/ray-operator/ray-operator/internal/passsteps"
	"github.com/ray-operator/ray-operator/internal/raytls"
)

// annotationCertManagerCertificate is the annotation cert-manager puts on
// the Secrets it writes, naming their Certificate.
const annotationCertManagerCertificate = "cert-manager.io/certificate-name"

// reconcileOperatorPKI issues the cluster's CA, head and worker
// certificates itself (mtlsCertificates "operator"), into the Secrets
// cert-manager would write, controlled by the cluster: each is issued when
// missing and again when its names (the Pod IPs), its CA or its renewal
// time call for it. It asks for the next pass at the earliest renewal.
func (r *Reconciler) reconcileOperatorPKI(ctx context.Context, s *scope) (passsteps.Result, error) {
	c := s.cluster
	now := r.Clock.Now()
	caSpec := raytls.CACertificate(c)
	ca, next, err := r.applyPKISecret(ctx, s, caSpec, nil, now)
	if err != nil {
		return passsteps.Result{}, err
	}
	s.mtlsExpiries = map[string]time.Time{caSpec.Name: ca.Cert.NotAfter}
	leaves, err := r.leafCertificates(ctx, c)
	if err != nil {
		return passsteps.Result{}, err
	}
	for _, l := range leaves {
		spec := clusterpki.WithLifetime(l, r.leafLifetime())
		leaf, renew, err := r.applyPKISecret(ctx, s, spec, ca, now)
		if err != nil {
			return passsteps.Result{}, err
		}
		s.mtlsExpiries[spec.Name] = leaf.Cert.NotAfter
		if renew.Before(next) {
			next = renew
		}
	}
	// The Secrets the Pods mount are written: they are ready.
	s.mtlsChecked, s.mtlsErr = true, nil
	return passsteps.Requeue(max(next.Sub(now), time.Second)), nil
}

func (r *Reconciler) leafLifetime() time.Duration {
	if d := r.opts.MTLSCertificateDuration; d > 0 {
		return d
	}
	return configv1alpha1.DefaultMTLSCertificateDuration
}

// applyPKISecret returns the key pair of spec's Secret and when it is due
// for renewal, issuing it (signed by ca, or self-signed when nil) first
// when the Secret is missing or ReissueReason says so.
func (r *Reconciler) applyPKISecret(ctx context.Context, s *scope, spec *certmanagerv1.Certificate, ca *clusterpki.KeyPair, now time.Time) (*clusterpki.KeyPair, time.Time, error) {
	secret := &corev1.Secret{}
	key := client.ObjectKey{Namespace: s.cluster.Namespace, Name: spec.Spec.SecretName}
	err := r.LiveReader.Get(ctx, key, secret)
	if apierrors.IsNotFound(err) {
		return r.issuePKISecret(ctx, s, spec, ca, now, nil, "")
	}
	if err != nil {
		return nil, time.Time{}, err
	}
	if !r.pkiSecretAdoptable(secret, s.cluster, spec) {
		return nil, time.Time{}, fmt.Errorf("secret %s exists and is neither this RayCluster's nor written by cert-manager for it", key.Name)
	}
	if why := clusterpki.ReissueReason(secret.Data, spec, ca, now); why != "" {
		return r.issuePKISecret(ctx, s, spec, ca, now, secret, why)
	}
	kp, err := clusterpki.FromSecret(secret.Data)
	if err != nil {
		return nil, time.Time{}, err
	}
	if !metav1.IsControlledBy(secret, s.cluster) {
		// cert-manager's Secret, still good: the operator takes it over
		// before the Certificates that own it are deleted.
		setPKISecretMeta(secret, pkiSecret(s.cluster, spec, nil))
		if err := r.Children().Update(ctx, s.cluster, secret, childwrite.Event{}, childwrite.RawError()); err != nil {
			return nil, time.Time{}, err
		}
	}
	return kp, clusterpki.RenewalTime(kp, spec), nil
}

// pkiSecretAdoptable: the Secret is the cluster's, or cert-manager wrote it
// for this spec's Certificate (the cluster used cert-manager before).
func (r *Reconciler) pkiSecretAdoptable(secret *corev1.Secret, c *rayv1.RayCluster, spec *certmanagerv1.Certificate) bool {
	return metav1.IsControlledBy(secret, c) ||
		(secret.Annotations[annotationCertManagerCertificate] == spec.Name && secret.Type == corev1.SecretTypeTLS)
}

// issuePKISecret issues spec and creates its Secret, or, with existing,
// replaces its content (why says what called for it).
func (r *Reconciler) issuePKISecret(ctx context.Context, s *scope, spec *certmanagerv1.Certificate, ca *clusterpki.KeyPair,
	now time.Time, existing *corev1.Secret, why string) (*clusterpki.KeyPair, time.Time, error) {
	kp, err := clusterpki.Issue(spec, ca, now)
	if err != nil {
		return nil, time.Time{}, err
	}
	desired := pkiSecret(s.cluster, spec, clusterpki.SecretData(kp, ca))
	if existing == nil {
		if err := r.Children().Create(ctx, s.cluster, desired, childwrite.Event{}, childwrite.RawError()); err != nil {
			return nil, time.Time{}, err
		}
		ctrl.LoggerFrom(ctx).Info("Issued mTLS certificate", "secret", klog.KObj(desired), "notAfter", kp.Cert.NotAfter)
		return kp, clusterpki.RenewalTime(kp, spec), nil
	}
	setPKISecretMeta(existing, desired)
	existing.Data = desired.Data
	err = r.Children().Update(ctx, s.cluster, existing, childwrite.Event{Reason: reasonMTLSCertificatesUpdated,
		Note: fmt.Sprintf("Issued %s again, %s (IPs: %v, expires %s)", noun(spec), why, spec.Spec.IPAddresses, kp.Cert.NotAfter.UTC().Format(time.RFC3339)),
	}, childwrite.RawError())
	if err != nil {
		return nil, time.Time{}, err
	}
	return kp, clusterpki.RenewalTime(kp, spec), nil
}

// noun names the certificate in events: "CA certificate", "head
// certificate" or "worker certificate".
func noun(spec *certmanagerv1.Certificate) string {
	if spec.Spec.IsCA {
		return "CA certificate"
	}
	return raytls.Noun(spec)
}

// pkiSecret is the Secret of spec with data: the Certificate's labels, a
// controller reference to the cluster, type kubernetes.io/tls.
func pkiSecret(c *rayv1.RayCluster, spec *certmanagerv1.Certificate, data map[string][]byte) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name:            spec.Spec.SecretName,
			Namespace:       c.Namespace,
			Labels:          spec.Labels,
			OwnerReferences: slices.Clone(spec.OwnerReferences),
		},
		Type: corev1.SecretTypeTLS,
		Data: data,
	}
}

// setPKISecretMeta gives secret desired's labels and owner references,
// dropping cert-manager's annotations.
func setPKISecretMeta(secret, desired *corev1.Secret) {
	secret.Labels = desired.Labels
	secret.OwnerReferences = desired.OwnerReferences
	for k := range secret.Annotations {
		if strings.HasPrefix(k, "cert-manager.io/") {
			delete(secret.Annotations, k)
		}
	}
}
