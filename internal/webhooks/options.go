package webhooks

import (
	"errors"
	"fmt"
	"time"
)

// Certificate management modes (--webhook-cert-management).
const (
	// CertsInternal: the operator makes a CA and a serving certificate,
	// keeps them in a Secret, rotates them before they expire and puts the
	// CA into its ValidatingWebhookConfiguration. No cert-manager needed.
	CertsInternal = "internal"
	// CertsExternal: another tool (cert-manager, say) writes the serving
	// certificate into CertDir and the CA bundle into the configuration.
	CertsExternal = "external"
)

// Defaults of Options, also the flags' defaults.
const (
	DefaultPort              = 9443
	DefaultCertDir           = "/tmp/k8s-webhook-server/serving-certs"
	DefaultSecretName        = "webhook-server-cert"
	DefaultServiceName       = "kuberay-webhook-service"
	DefaultConfigurationName = "kuberay-validating-webhook-configuration"
)

// Options configure the webhook server and its certificate. Enabled comes
// from ENABLE_WEBHOOKS, the rest from the --webhook-* flags.
type Options struct {
	Enabled bool
	// Port and Host the HTTPS server listens on (Host empty: all).
	Port int
	Host string
	// CertDir holds tls.crt and tls.key; the server reloads them when
	// they change.
	CertDir string
	// CertManagement is CertsInternal or CertsExternal.
	CertManagement string
	// Namespace holds the certificate Secret (the operator's namespace,
	// POD_NAMESPACE in a Pod).
	Namespace string
	// SecretName is the certificate Secret, mounted at CertDir in a Pod.
	SecretName string
	// ServiceName is the Service in front of the webhook server: the
	// certificate is made for <ServiceName>.<Namespace>.svc.
	ServiceName string
	// ExtraDNSNames are more names the certificate is valid for (for a
	// server reached as localhost outside a cluster).
	ExtraDNSNames []string
	// ConfigurationName is the ValidatingWebhookConfiguration whose CA
	// bundle the operator keeps.
	ConfigurationName string
	// WriteCertFiles copies the Secret's certificate into CertDir, for an
	// operator running outside a Pod, where no kubelet mounts the Secret.
	WriteCertFiles bool
	// RotationCheck is how often the certificate's validity is checked
	// (zero: every 12 hours); it is renewed 90 days before it expires.
	RotationCheck time.Duration
}

// Defaults returns the options of a disabled webhook server with every
// default set.
func Defaults() Options {
	return Options{
		Port: DefaultPort, CertDir: DefaultCertDir, CertManagement: CertsInternal,
		SecretName: DefaultSecretName, ServiceName: DefaultServiceName, ConfigurationName: DefaultConfigurationName,
	}
}

// Validate reports options the webhook server cannot run with.
func (o Options) Validate() error {
	if !o.Enabled {
		return nil
	}
	var errs []error
	if o.Port <= 0 || o.Port > 65535 {
		errs = append(errs, fmt.Errorf("--webhook-port %d is not a TCP port", o.Port))
	}
	if o.CertDir == "" {
		errs = append(errs, errors.New("--webhook-cert-dir must not be empty"))
	}
	switch o.CertManagement {
	case CertsExternal:
	case CertsInternal:
		if o.Namespace == "" {
			errs = append(errs, errors.New("ENABLE_WEBHOOKS with internal certificates needs the operator's namespace: set POD_NAMESPACE or --webhook-namespace"))
		}
		if o.SecretName == "" || o.ServiceName == "" || o.ConfigurationName == "" {
			errs = append(errs, errors.New("--webhook-secret-name, --webhook-service-name and --webhook-configuration-name must not be empty"))
		}
	default:
		errs = append(errs, fmt.Errorf("--webhook-cert-management %q is not %q or %q", o.CertManagement, CertsInternal, CertsExternal))
	}
	return errors.Join(errs...)
}

// dnsName is the name the serving certificate is made for.
func (o Options) dnsName() string {
	return o.ServiceName + "." + o.Namespace + ".svc"
}
