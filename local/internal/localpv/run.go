package localpv

import (
	"context"

	"github.com/go-logr/logr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	"sigs.k8s.io/sig-storage-lib-external-provisioner/v13/controller"
)

// Start installs the default StorageClass and runs the provisioner of
// node's volumes in dir (which exists) until ctx ends; the returned channel
// closes once it has stopped.
func Start(ctx context.Context, client kubernetes.Interface, dir, node string, log logr.Logger) (<-chan struct{}, error) {
	if err := InstallDefaultStorageClass(ctx, client); err != nil {
		return nil, err
	}
	ctx = klog.NewContext(ctx, log)
	pc := controller.NewProvisionController(ctx, client, ProvisionerName, &Provisioner{Dir: dir, NodeName: node},
		controller.LeaderElection(false), // one node, one provisioner
		controller.AddFinalizer(true),    // a PV's directory goes before the PV
	)
	done := make(chan struct{})
	go func() {
		defer close(done)
		pc.Run(ctx)
	}()
	return done, nil
}
