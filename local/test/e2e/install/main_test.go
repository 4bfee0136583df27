// Package install_test installs the operator as users install KubeRay's:
// the image built from this source by hack/image (the code path of `make
// image` and `make push`), pushed into the local cluster's registry, and
// helm-chart/ray-operator installed with the real helm. The operator then
// runs as a Pod under the chart's ServiceAccount, reaching the API server
// through the kubernetes Service with its own token (no admin kubeconfig),
// and the suite checks what a user relies on, with real Ray: a RayJob in
// K8sJobMode succeeds, the chart's webhooks refuse an invalid RayCluster,
// `helm upgrade` to another version replaces the operator while a
// RayService serves and a RayJob runs without touching either, a second
// replica takes over when the leader's Pod is deleted, and `helm uninstall`
// leaves the CRDs, the Ray objects and their Pods.
package install_test

import (
	"context"
	"fmt"
	"net/netip"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/ray-operator/ray-operator/internal/auditlog"
	"github.com/ray-operator/ray-operator/internal/controlplane"
	"github.com/ray-operator/ray-operator/local/internal/cluster"
	"github.com/ray-operator/ray-operator/local/internal/e2eutil"
)

// volumeSync is the node's volume resync period: how soon a Secret's
// change reaches the Pods that mount it. A kubelet's default is a minute;
// the operator's webhook certificate, which it writes into a Secret after
// its Pod started, is served once the mount holds it.
const volumeSync = 10 * time.Second

// suite is the package's cluster, with an image registry the node pulls
// from and an audit log, and the image builder.
type suite struct {
	*e2eutil.Suite
	auditLog string
	registry netip.AddrPort
	images   *imageBuilder
	// auditFrom is when the running top-level test began: the audit
	// events it reads are those since (an earlier test's operator used
	// the same ServiceAccount and user agent from other Pods).
	auditFrom time.Time
}

// audit returns the API server's audit events since the running test
// began.
func (s *suite) audit(t *testing.T) []auditlog.Event {
	t.Helper()
	events, err := auditlog.Read(s.auditLog)
	if err != nil {
		t.Fatal(err)
	}
	return slices.DeleteFunc(events, func(e auditlog.Event) bool { return e.StageTimestamp.Time.Before(s.auditFrom) })
}

var shared = new(suite)

// TestMain runs the suite only when RAY_OPERATOR_E2E_INSTALL is true
// (`make test-install` sets it): it is not one of `make
// test-e2e-local`'s packages. No CRDs: the chart installs them.
func TestMain(m *testing.M) {
	e2eutil.RunSuite(m, e2eutil.SuiteOptions{
		Name:            "local e2e install",
		StateDirPattern: "ray-operator-local-install-",
		MakeTarget:      "test-install",
		EnableEnv:       "RAY_OPERATOR_E2E_INSTALL",
		EnableValue:     "true",
		NoCRDs:          true,
		Cluster:         cluster.Options{SyncFrequency: volumeSync},
		Capacity:        e2eutil.ParallelNode,
		// The suite's clients log nothing worth reading; the operator
		// logs in its Pod.
		DiscardClientLogs: true,
		Prepare:           shared.prepare,
		Started:           func(s *e2eutil.Suite) error { shared.Suite = s; return nil },
	})
}

// prepare builds the image builder and chooses the registry's address and
// the audit log.
func (s *suite) prepare(ctx context.Context, es *e2eutil.Suite, o *cluster.Options) error {
	var err error
	if s.images, err = newImageBuilder(ctx, es.Root, es.StateDir); err != nil {
		return err
	}
	if s.registry, err = freeLoopback(); err != nil {
		return err
	}
	s.auditLog = filepath.Join(es.StateDir, "audit.log")
	o.Registry, o.AuditLogPath = s.registry, s.auditLog
	fmt.Printf("local e2e install: registry at %s\n", s.registry)
	return nil
}

// freeLoopback is a free port on 127.0.0.1 for the cluster's registry
// (not make run's 127.0.0.1:5001, which a developer's cluster may hold).
func freeLoopback() (netip.AddrPort, error) {
	ports, err := controlplane.FreePorts(1)
	if err != nil {
		return netip.AddrPort{}, err
	}
	return netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), uint16(ports[0])), nil //nolint:gosec // a port number
}
