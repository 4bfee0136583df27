package webhooks

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// certFilesPollInterval is how often certFileWriter reads the Secret.
const certFilesPollInterval = 2 * time.Second

// certFileWriter does for an operator outside a Pod what the kubelet does
// for one inside: it keeps CertDir's tls.crt and tls.key equal to the
// certificate Secret, so that the webhook server (which reloads changed
// files) follows every rotation. It runs on every replica.
type certFileWriter struct {
	reader client.Reader
	key    types.NamespacedName
	dir    string
}

func (w *certFileWriter) NeedLeaderElection() bool { return false }

func (w *certFileWriter) Start(ctx context.Context) error {
	log := ctrl.Log.WithName("webhooks").WithValues("secret", w.key, "dir", w.dir)
	if err := os.MkdirAll(w.dir, 0o700); err != nil {
		return fmt.Errorf("creating the webhook certificate directory: %w", err)
	}
	wait.UntilWithContext(ctx, func(ctx context.Context) {
		if err := w.sync(ctx); err != nil {
			log.Error(err, "Copying the webhook certificate to files")
		}
	}, certFilesPollInterval)
	return nil
}

// sync writes the Secret's tls.crt and tls.key when they differ from the
// files. Each file is replaced by a rename, so a reader never sees half.
func (w *certFileWriter) sync(ctx context.Context) error {
	secret := &corev1.Secret{}
	if err := w.reader.Get(ctx, w.key, secret); err != nil {
		if apierrors.IsNotFound(err) {
			return nil // the rotator has not made it yet
		}
		return err
	}
	for _, name := range []string{corev1.TLSPrivateKeyKey, corev1.TLSCertKey} {
		data := secret.Data[name]
		if len(data) == 0 {
			return nil
		}
		if err := replaceIfChanged(filepath.Join(w.dir, name), data); err != nil {
			return err
		}
	}
	return nil
}

func replaceIfChanged(path string, data []byte) error {
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data) {
		return nil
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
