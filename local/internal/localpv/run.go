package localpv

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	"sigs.k8s.io/sig-storage-lib-external-provisioner/v13/controller"
)

// provisionedByAnnotation names the provisioner of a PersistentVolume.
const provisionedByAnnotation = "pv.kubernetes.io/provisioned-by"

// Start installs the default StorageClass, mounts the filesystems of the
// volumes p provisioned that the API still has (see Reattach), and runs p
// until ctx ends; the returned channel closes once it has stopped. p's
// directories exist.
func Start(ctx context.Context, client kubernetes.Interface, p *Provisioner, log logr.Logger) (<-chan struct{}, error) {
	if err := InstallDefaultStorageClass(ctx, client); err != nil {
		return nil, err
	}
	if err := p.Reattach(ctx, client, log); err != nil {
		return nil, err
	}
	ctx = klog.NewContext(ctx, log)
	pc := controller.NewProvisionController(ctx, client, ProvisionerName, p,
		controller.LeaderElection(false), // one node, one provisioner
		controller.AddFinalizer(true),    // a PV's filesystem goes before the PV
	)
	done := make(chan struct{})
	go func() {
		defer close(done)
		pc.Run(ctx)
	}()
	return done, nil
}

// Reattach mounts the filesystem of each PersistentVolume p provisioned
// whose file is there, unless it is mounted already: after the machine
// restarted, the node's volumes are files again. A volume it cannot mount
// is logged and left (its pods wait with FailedMount); files without a PV
// (a cluster started afresh) stay unmounted, their data kept.
func (p *Provisioner) Reattach(ctx context.Context, client kubernetes.Interface, log logr.Logger) error {
	pvs, err := client.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("listing persistent volumes: %w", err)
	}
	for i := range pvs.Items {
		pv := &pvs.Items[i]
		if pv.Annotations[provisionedByAnnotation] != ProvisionerName || pv.Spec.Local == nil || pv.Spec.Local.Path != filepath.Join(p.Dir, pv.Name) {
			continue
		}
		if _, err := os.Stat(p.imagePath(pv.Name)); errors.Is(err, fs.ErrNotExist) {
			continue // a plain directory, provisioned before filesystems
		}
		if err := p.attach(pv.Name, pv.Spec.MountOptions); err != nil {
			log.Error(err, "Cannot mount a persistent volume's filesystem", "persistentVolume", pv.Name)
		}
	}
	return nil
}
