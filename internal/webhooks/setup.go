package webhooks

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/open-policy-agent/cert-controller/pkg/rotator"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/validation"
)

// The rotator reads and writes its Secret and the configuration's CA
// bundle. Those permissions are not in the generated ClusterRole (an
// operator without webhooks does not need them) but in config/webhook's
// own Role and ClusterRole.

// errCertsNotReady is what /readyz says until the certificate is in place.
var errCertsNotReady = errors.New("webhook serving certificate not ready yet")

// Setup adds the webhooks to mgr: with internal certificates it adds the
// certificate rotator first, and registers the four validators (which
// starts the HTTPS server) once the certificate is on disk and its CA in
// the configuration. /readyz fails until the server runs. Every replica
// serves webhooks, leader or not. gates are the feature gates the RayCronJob
// spec is validated with.
func Setup(mgr manager.Manager, o Options, gates validation.FeatureGates) error {
	if err := o.Validate(); err != nil {
		return err
	}
	ready := make(chan struct{})
	if o.CertManagement == CertsInternal {
		if err := addRotator(mgr, o, ready); err != nil {
			return err
		}
	} else {
		close(ready)
	}
	if err := mgr.AddReadyzCheck("webhooks", readyCheck(mgr, ready)); err != nil {
		return fmt.Errorf("adding the webhook readiness check: %w", err)
	}
	return mgr.Add(anyReplica(func(ctx context.Context) error {
		select {
		case <-ready:
			return register(mgr, gates)
		case <-ctx.Done():
			return nil
		}
	}))
}

func addRotator(mgr manager.Manager, o Options, ready chan struct{}) error {
	if err := ensureSecret(mgr.GetAPIReader(), mgr.GetClient(), o); err != nil {
		return err
	}
	err := rotator.AddRotator(mgr, &rotator.CertRotator{
		SecretKey:              types.NamespacedName{Namespace: o.Namespace, Name: o.SecretName},
		CertDir:                o.CertDir,
		CAName:                 "ray-operator-webhook-ca",
		CAOrganization:         "ray-operator",
		DNSName:                o.dnsName(),
		ExtraDNSNames:          o.ExtraDNSNames,
		IsReady:                ready,
		Webhooks:               []rotator.WebhookInfo{{Name: o.ConfigurationName, Type: rotator.Validating}},
		RequireLeaderElection:  false,
		RotationCheckFrequency: o.RotationCheck,
		ControllerName:         "webhook-cert-rotator",
	})
	if err != nil {
		return fmt.Errorf("adding the webhook certificate rotator: %w", err)
	}
	if o.WriteCertFiles {
		return mgr.Add(&certFileWriter{reader: mgr.GetAPIReader(), key: types.NamespacedName{Namespace: o.Namespace, Name: o.SecretName}, dir: o.CertDir})
	}
	return nil
}

// secretCreateTimeout bounds the start-up creation of the Secret.
const secretCreateTimeout = 30 * time.Second

// ensureSecret creates the certificate Secret, empty, when it is missing:
// the rotator fills a Secret but never creates one, and an install should
// not have to ship an empty Secret that a later apply could wipe.
func ensureSecret(reader client.Reader, writer client.Writer, o Options) error {
	ctx, cancel := context.WithTimeout(context.Background(), secretCreateTimeout)
	defer cancel()
	key := types.NamespacedName{Namespace: o.Namespace, Name: o.SecretName}
	err := reader.Get(ctx, key, &corev1.Secret{})
	if !apierrors.IsNotFound(err) {
		if err != nil {
			return fmt.Errorf("reading the webhook certificate Secret %s: %w", key, err)
		}
		return nil
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: o.Namespace, Name: o.SecretName}}
	if err := writer.Create(ctx, secret); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating the webhook certificate Secret %s: %w", key, err)
	}
	return nil
}

func readyCheck(mgr manager.Manager, ready <-chan struct{}) func(*http.Request) error {
	return func(req *http.Request) error {
		select {
		case <-ready:
			return mgr.GetWebhookServer().StartedChecker()(req)
		default:
			return errCertsNotReady
		}
	}
}

// register adds the four validators to the manager's webhook server.
func register(mgr manager.Manager, gates validation.FeatureGates) error {
	errs := []error{
		ctrl.NewWebhookManagedBy(mgr, &rayv1.RayCluster{}).
			WithValidator(validator[*rayv1.RayCluster]{kind: rayv1.KindRayCluster, check: rayClusterErrors(gates)}).Complete(),
		ctrl.NewWebhookManagedBy(mgr, &rayv1.RayJob{}).
			WithValidator(validator[*rayv1.RayJob]{kind: rayv1.KindRayJob, check: rayJobErrors}).Complete(),
		ctrl.NewWebhookManagedBy(mgr, &rayv1.RayService{}).
			WithValidator(validator[*rayv1.RayService]{kind: rayv1.KindRayService, check: rayServiceErrors}).Complete(),
		ctrl.NewWebhookManagedBy(mgr, &rayv1.RayCronJob{}).
			WithValidator(validator[*rayv1.RayCronJob]{kind: rayv1.KindRayCronJob, check: rayCronJobErrors(gates)}).Complete(),
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("registering the webhooks: %w", err)
	}
	ctrl.Log.WithName("webhooks").Info("Serving the validating webhooks")
	return nil
}

// anyReplica is a runnable that runs on every replica, not only the leader.
type anyReplica func(context.Context) error

func (f anyReplica) Start(ctx context.Context) error { return f(ctx) }
func (anyReplica) NeedLeaderElection() bool          { return false }
