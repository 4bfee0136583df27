package kueue

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// certSync keeps a directory in step with Kueue's certificate Secret, as
// the kubelet keeps the Secret volume of Kueue's Pod: Kueue's rotator
// writes the certificates into the Secret and then waits for them to appear
// in its certificate directory. Kueue runs on the host here, with no
// kubelet to mount the Secret.
type certSync struct {
	dir string

	mu      sync.Mutex
	lastErr error
}

// start follows the Secret until ctx ends.
func (c *certSync) start(ctx context.Context, clientset kubernetes.Interface) error {
	if err := os.MkdirAll(c.dir, 0o700); err != nil {
		return fmt.Errorf("creating %s: %w", c.dir, err)
	}
	factory := informers.NewSharedInformerFactoryWithOptions(clientset, 0, informers.WithNamespace(Namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.FieldSelector = "metadata.name=" + SecretName }))
	informer := factory.Core().V1().Secrets().Informer()
	_, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.write(obj) },
		UpdateFunc: func(_, obj any) { c.write(obj) },
	})
	if err != nil {
		return err
	}
	factory.Start(ctx.Done())
	return nil
}

// write writes each key of the Secret to a file of that name, each
// through a rename so that Kueue never reads half a file.
func (c *certSync) write(obj any) {
	secret, ok := obj.(*corev1.Secret)
	if !ok {
		return
	}
	var err error
	for name, data := range secret.Data {
		if err = writeFile(filepath.Join(c.dir, name), data); err != nil {
			break
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lastErr = err
}

// err is the last write's error.
func (c *certSync) err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lastErr
}

func writeFile(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return fmt.Errorf("writing Kueue's certificates: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("writing Kueue's certificates: %w", err)
	}
	return nil
}
