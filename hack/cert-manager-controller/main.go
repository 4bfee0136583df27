// Command cert-manager-controller runs cert-manager's own certificate and
// issuer control loops (SelfSigned and CA issuers only), built from the
// cert-manager module pinned in go.mod. cert-manager publishes its controller
// binary's main package in a module the Go module proxy does not serve, so
// this is the smallest main that starts the same loops, without webhook,
// cainjector, ACME or leader election.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/cert-manager/cert-manager/pkg/controller"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/approver"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/ca"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/selfsigned"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/issuing"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/keymanager"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/readiness"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/requestmanager"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/revisionmanager"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/trigger"
	_ "github.com/cert-manager/cert-manager/pkg/controller/issuers"
	_ "github.com/cert-manager/cert-manager/pkg/issuer/ca"
	_ "github.com/cert-manager/cert-manager/pkg/issuer/selfsigned"
	"golang.org/x/sync/errgroup"
)

// controllers are the loops that issue a Certificate from a SelfSigned or CA
// Issuer in the Certificate's namespace.
var controllers = []string{
	"issuers",
	"certificates-trigger",
	"certificates-key-manager",
	"certificates-request-manager",
	"certificates-issuing",
	"certificates-readiness",
	"certificates-revision-manager",
	"certificaterequests-approver",
	"certificaterequests-issuer-ca",
	"certificaterequests-issuer-selfsigned",
}

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig of the cluster")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *kubeconfig); err != nil {
		fmt.Fprintln(os.Stderr, "cert-manager-controller:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, kubeconfig string) error {
	factory, err := controller.NewContextFactory(ctx, controller.ContextOptions{
		Kubeconfig:         kubeconfig,
		KubernetesAPIQPS:   20,
		KubernetesAPIBurst: 50,
	})
	if err != nil {
		return err
	}
	shared, err := factory.Build()
	if err != nil {
		return err
	}
	g, gctx := errgroup.WithContext(ctx)
	for _, name := range controllers {
		newController, ok := controller.Known()[name]
		if !ok {
			return fmt.Errorf("controller %q is not registered", name)
		}
		c, err := newController(factory)
		if err != nil {
			return fmt.Errorf("controller %q: %w", name, err)
		}
		g.Go(func() error { return c.Run(2, gctx) })
	}
	shared.SharedInformerFactory.Start(gctx.Done())
	shared.KubeSharedInformerFactory.Start(gctx.Done())
	shared.HTTP01ResourceMetadataInformersFactory.Start(gctx.Done())
	return g.Wait()
}
