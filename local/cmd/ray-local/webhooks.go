package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ray-operator/ray-operator/internal/webhooks"
)

// localWebhookNamespace holds the certificate Secret when neither
// --webhook-namespace nor POD_NAMESPACE names one.
const localWebhookNamespace = "ray-system"

// installLocalWebhooks prepares the local control plane for webhooks served
// by this process: the namespace of the certificate Secret, and the
// generated ValidatingWebhookConfiguration pointed at
// https://localhost:<port>. It returns the webhook options to run with:
// internal certificates valid for localhost, copied to a directory under
// the state directory (no kubelet mounts the Secret here).
func installLocalWebhooks(ctx context.Context, cfg *rest.Config, o webhooks.Options, l *localFlags) (webhooks.Options, error) {
	o.Enabled = true
	o.CertManagement = webhooks.CertsInternal
	o.WriteCertFiles = true
	o.ExtraDNSNames = append(o.ExtraDNSNames, "localhost")
	if o.Namespace == "" {
		o.Namespace = localWebhookNamespace
	}
	if o.CertDir == webhooks.DefaultCertDir {
		o.CertDir = filepath.Join(l.stateDir, "webhook-certs")
	}
	if err := o.Validate(); err != nil {
		return o, err
	}
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return o, err
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return o, err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: o.Namespace}}
	if err := c.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return o, fmt.Errorf("creating namespace %s: %w", o.Namespace, err)
	}
	hooks, err := webhooks.LocalConfiguration(filepath.Join(l.root, webhooks.ManifestPath), o.ConfigurationName,
		fmt.Sprintf("https://localhost:%d", o.Port))
	if err != nil {
		return o, err
	}
	if err := c.Delete(ctx, hooks); err != nil && !apierrors.IsNotFound(err) {
		return o, fmt.Errorf("replacing the webhook configuration: %w", err)
	}
	if err := c.Create(ctx, hooks); err != nil {
		return o, fmt.Errorf("installing the webhook configuration: %w", err)
	}
	fmt.Fprintf(os.Stderr, "ray-local: validating webhooks at https://localhost:%d (configuration %s)\n", o.Port, o.ConfigurationName)
	return o, nil
}
