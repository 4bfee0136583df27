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
	"flag"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/ray-operator/ray-operator/internal/auditlog"
	"github.com/ray-operator/ray-operator/internal/controlplane"
	"github.com/ray-operator/ray-operator/internal/testing/testenv"
	localcluster "github.com/ray-operator/ray-operator/local/internal/cluster"
	"github.com/ray-operator/ray-operator/local/internal/e2eutil"
)

// Environment variables `make test-install` sets. The suite runs only
// with enableEnv set: it is not one of `make test-e2e-local`'s packages.
const (
	venvEnv   = "RAY_OPERATOR_RAY_VENV"
	redisEnv  = "RAY_OPERATOR_REDIS_SERVER"
	enableEnv = "RAY_OPERATOR_E2E_INSTALL"
)

// volumeSync is the node's volume resync period: how soon a Secret's
// change reaches the Pods that mount it. A kubelet's default is a minute;
// the operator's webhook certificate, which it writes into a Secret after
// its Pod started, is served once the mount holds it.
const volumeSync = 10 * time.Second

// suite is the package's cluster, with an image registry the node pulls
// from and an audit log, and the image builder.
type suite struct {
	cluster   *localcluster.Cluster
	client    client.Client
	clientset kubernetes.Interface
	kube      e2eutil.Kube
	root      string
	stateDir  string
	auditLog  string
	registry  netip.AddrPort
	images    *imageBuilder
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

var shared *suite

func TestMain(m *testing.M) {
	localcluster.RunNodeIfChild()
	flag.Parse()
	// The suite's clients log nothing worth reading; the operator logs in
	// its Pod.
	ctrllog.SetLogger(logr.Discard())
	if testing.Short() || os.Getenv(enableEnv) != "true" {
		fmt.Printf("local e2e install: skipped (-short, or %s is not true: make test-install sets it)\n", enableEnv)
		os.Exit(0)
	}
	os.Exit(runSuite(m))
}

func runSuite(m *testing.M) int {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	began := time.Now()
	s, err := startSuite(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, "local e2e install: starting:", err)
		return 1
	}
	shared = s
	code := m.Run()
	stopCtx, stopCancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer stopCancel()
	if err := s.cluster.Stop(stopCtx); err != nil {
		fmt.Fprintln(os.Stderr, "local e2e install: stopping the local cluster:", err)
		return 1
	}
	if code == 0 {
		_ = os.RemoveAll(s.stateDir)
	} else {
		fmt.Printf("local e2e install: state (audit log, component logs) kept in %s\n", s.stateDir)
	}
	fmt.Printf("local e2e install: %v in all\n", time.Since(began).Round(time.Second))
	return code
}

func startSuite(ctx context.Context) (*suite, error) {
	venv := os.Getenv(venvEnv)
	if venv == "" {
		return nil, fmt.Errorf("%s is not set (make test-install sets it from hack/ray-venv.sh)", venvEnv)
	}
	if err := localcluster.CanHostPods(); err != nil {
		return nil, fmt.Errorf("this machine cannot run real pods: %w", err)
	}
	wd, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	root, err := controlplane.ModuleRoot(wd)
	if err != nil {
		return nil, err
	}
	stateDir, err := os.MkdirTemp("", "ray-operator-local-install-")
	if err != nil {
		return nil, err
	}
	s := &suite{root: root, stateDir: stateDir, auditLog: filepath.Join(stateDir, "audit.log")}
	if s.images, err = newImageBuilder(ctx, root, stateDir); err != nil {
		return nil, err
	}
	if s.registry, err = freeLoopback(); err != nil {
		return nil, err
	}
	capacity, err := e2eutil.ParallelCapacity()
	if err != nil {
		return nil, err
	}
	began := time.Now()
	// No CRDs: the chart installs them.
	s.cluster, err = localcluster.Start(ctx, localcluster.Options{
		Capacity:      capacity,
		StateDir:      stateDir,
		RayVenvDir:    venv,
		RedisServer:   os.Getenv(redisEnv),
		Registry:      s.registry,
		AuditLogPath:  s.auditLog,
		SyncFrequency: volumeSync,
	})
	if err != nil {
		return nil, err
	}
	fmt.Printf("local e2e install: cluster ready in %v (state in %s, registry at %s)\n", time.Since(began).Round(time.Millisecond), stateDir, s.registry)
	return s, s.connect()
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

// connect builds the suite's clients from the cluster's admin config: the
// test's, as helm's and kubectl's, never the operator's.
func (s *suite) connect() error {
	scheme, err := testenv.NewScheme()
	if err != nil {
		return err
	}
	cfg := s.cluster.RESTConfig()
	if s.client, err = client.New(cfg, client.Options{Scheme: scheme}); err != nil {
		return err
	}
	if s.clientset, err = kubernetes.NewForConfig(cfg); err != nil {
		return err
	}
	s.kube = e2eutil.Kube{Client: s.client, Clientset: s.clientset, Kubeconfig: s.cluster.KubeconfigPath()}
	return nil
}
