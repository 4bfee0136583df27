// Package testenv starts a real kube-apiserver and etcd (controller-runtime's
// envtest) with the project's CRDs installed, for integration tests. With
// WithFullControlPlane it also runs kube-scheduler, kube-controller-manager
// and kwok nodes (package controlplane), so pods are scheduled and go Ready,
// owners garbage-collect their dependents and batch Jobs get pods.
//
// One test:
//
//	env := testenv.Start(t)
//	ns := env.Namespace(t)
//
// One API server shared by a test package (starting one costs seconds):
//
//	func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }
//	func TestX(t *testing.T)    { env := testenv.Shared(t); ... }
//
// controller-runtime's logs (envtest, managers, controllers) are discarded;
// RAY_OPERATOR_TEST_LOG=1 (LogEnv) sends them to stderr.
package testenv

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/ray-operator/ray-operator/internal/auditlog"
	"github.com/ray-operator/ray-operator/internal/controlplane"
)

// Env is a running API server and a client for it.
type Env struct {
	// Config reaches the API server as a cluster admin.
	Config *rest.Config
	// Client is a direct (uncached) client whose scheme is Scheme.
	Client client.Client
	// Scheme holds client-go's kinds, CRDs, the project's API and any
	// WithScheme additions.
	Scheme *runtime.Scheme
	// Kubeconfig is an admin kubeconfig for Config, e.g. for kubectl.
	Kubeconfig []byte
	// ControlPlane is the full local control plane; nil unless
	// WithFullControlPlane was given.
	ControlPlane *controlplane.ControlPlane

	stop func() error
	// envtest is the bare environment (nil for a full control plane).
	envtest *envtest.Environment
}

// AddUser adds a user in groups to the bare API server's authentication and
// returns a kubeconfig for it, so that processes under test can be told
// apart in the audit log.
func (e *Env) AddUser(name string, groups ...string) ([]byte, error) {
	if e.envtest == nil {
		return nil, errors.New("AddUser needs the bare API server, not a full control plane")
	}
	user, err := e.envtest.AddUser(envtest.User{Name: name, Groups: groups}, nil)
	if err != nil {
		return nil, fmt.Errorf("adding user %s: %w", name, err)
	}
	return user.KubeConfig()
}

// Start starts an environment for one test (or benchmark) and stops it when
// the test ends. It fails the test when the environment cannot start.
func Start(t testing.TB, opts ...Option) *Env {
	t.Helper()
	begin := time.Now()
	env, err := New(opts...)
	if err != nil {
		t.Fatalf("starting test environment: %v", err)
	}
	t.Logf("test environment started in %v", time.Since(begin).Round(time.Millisecond))
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Errorf("stopping test environment: %v", err)
		}
	})
	return env
}

// New starts an environment; the caller must call Stop. Prefer Start, or
// Main and Shared.
func New(opts ...Option) (*Env, error) {
	setLogger()
	s := newSettings(opts)
	scheme, err := NewScheme(s.schemeAdders...)
	if err != nil {
		return nil, err
	}
	crdDirs, err := s.crdDirectories()
	if err != nil {
		return nil, err
	}
	env := &Env{Scheme: scheme}
	if s.full {
		err = env.startFull(s, crdDirs)
	} else {
		err = env.startEnvtest(s, crdDirs)
	}
	if err != nil {
		return nil, errors.Join(err, env.Stop())
	}
	if env.Client, err = client.New(env.Config, client.Options{Scheme: scheme}); err != nil {
		return nil, errors.Join(fmt.Errorf("creating test client: %w", err), env.Stop())
	}
	return env, nil
}

// crdDirectories returns the CRD directories to install: those of
// WithCRDDirs, else <module root>/config/crd/bases.
func (s *settings) crdDirectories() ([]string, error) {
	dirs := s.crdDirs
	if !s.crdDirsSet || s.podGroups {
		root, err := moduleRoot()
		if err != nil {
			return nil, err
		}
		if !s.crdDirsSet {
			dirs = []string{filepath.Join(root, "config", "crd", "bases")}
		}
		if s.podGroups {
			dirs = append(dirs, filepath.Join(root, "test", "crds", "volcano"))
		}
	}
	if s.gatewayAPI {
		dir, err := moduleDir("sigs.k8s.io/gateway-api")
		if err != nil {
			return nil, err
		}
		dirs = append(dirs, filepath.Join(dir, "config", "crd", "standard"))
	}
	if s.podGroups {
		dir, err := moduleDir("sigs.k8s.io/scheduler-plugins")
		if err != nil {
			return nil, err
		}
		dirs = append(dirs, filepath.Join(dir, "config", "crd", "bases", "scheduling.x-k8s.io_podgroups.yaml"))
	}
	if s.certManager {
		dir, err := moduleDir("github.com/cert-manager/cert-manager")
		if err != nil {
			return nil, err
		}
		for _, f := range []string{"cert-manager.io_issuers.yaml", "cert-manager.io_certificates.yaml"} {
			dirs = append(dirs, filepath.Join(dir, "deploy", "crds", f))
		}
	}
	return dirs, nil
}

// moduleRoot is the root of this repository.
func moduleRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("getting the working directory: %w", err)
	}
	return controlplane.ModuleRoot(wd)
}

// moduleDir is the directory of a module of the build in the module cache.
func moduleDir(module string) (string, error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", module).Output()
	if err != nil {
		return "", fmt.Errorf("locating the %s module: %w", module, err)
	}
	dir := strings.TrimSpace(string(out))
	if dir == "" {
		return "", fmt.Errorf("module %s is not in the module cache; run go mod download", module)
	}
	return dir, nil
}

// crdInstallTimeout bounds the wait for the installed CRDs to be served.
// envtest's default (10 seconds) once ran out on a loaded machine (two
// cores, several suites at once); a healthy API server needs a second or two,
// so the generous bound costs nothing when all is well.
const crdInstallTimeout = 2 * time.Minute

// startEnvtest starts etcd and kube-apiserver with controller-runtime's
// envtest and installs the CRDs.
func (e *Env) startEnvtest(s *settings, crdDirs []string) error {
	binDir, err := controlplane.BinDir()
	if err != nil {
		return err
	}
	useExisting := false
	te := &envtest.Environment{
		BinaryAssetsDirectory: binDir,
		CRDDirectoryPaths:     crdDirs,
		CRDInstallOptions:     envtest.CRDInstallOptions{MaxTime: crdInstallTimeout},
		ErrorIfCRDPathMissing: true,
		Scheme:                e.Scheme,
		UseExistingCluster:    &useExisting,
	}
	if s.auditLog != "" {
		if err := configureAudit(te.ControlPlane.GetAPIServer(), s.auditLog); err != nil {
			return err
		}
	}
	if s.log != nil {
		te.ControlPlane.Etcd = &envtest.Etcd{Out: s.log, Err: s.log}
		api := te.ControlPlane.GetAPIServer()
		api.Out, api.Err = s.log, s.log
	}
	if e.Config, err = te.Start(); err != nil {
		// Start can fail after the processes are up (e.g. a bad CRD).
		return errors.Join(fmt.Errorf("starting envtest: %w", err), te.Stop())
	}
	e.Kubeconfig, e.envtest = te.KubeConfig, te
	release, err := guardChildren(binDir)
	if err != nil {
		return errors.Join(err, te.Stop())
	}
	e.stop = func() error {
		defer release()
		return te.Stop()
	}
	return nil
}

// startFull starts the full local control plane of package controlplane in
// a temporary state directory, removed on Stop.
func (e *Env) startFull(s *settings, crdDirs []string) error {
	stateDir, err := os.MkdirTemp("", "ray-operator-testenv-")
	if err != nil {
		return fmt.Errorf("creating control-plane state directory: %w", err)
	}
	cp, err := controlplane.Start(context.Background(), controlplane.Options{
		StateDir: stateDir,
		Nodes:    s.nodes,
		CRDDirs:  crdDirs,
		Log:      s.log,

		NodeMonitorGracePeriod: s.nodeMonitorGrace,
	})
	if err != nil {
		return errors.Join(err, os.RemoveAll(stateDir))
	}
	e.ControlPlane, e.Config = cp, cp.RESTConfig
	if e.Kubeconfig, err = os.ReadFile(cp.KubeconfigPath); err != nil {
		err = fmt.Errorf("reading kubeconfig: %w", err)
	}
	e.stop = func() error { return errors.Join(cp.Stop(), os.RemoveAll(stateDir)) }
	return err
}

// Stop stops the API server and everything started with it. It is safe to
// call more than once.
func (e *Env) Stop() error {
	if e.stop == nil {
		return nil
	}
	stop := e.stop
	e.stop = nil
	if err := stop(); err != nil {
		return fmt.Errorf("stopping test environment: %w", err)
	}
	return nil
}

// Namespace creates a namespace with a generated name for this test and
// returns its name; it is deleted when the test ends. Tests that share one
// API server keep apart by working in their own namespaces.
func (e *Env) Namespace(t testing.TB) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "test-"}}
	if err := e.Client.Create(t.Context(), ns); err != nil {
		t.Fatalf("creating test namespace: %v", err)
	}
	t.Cleanup(func() {
		// t.Context() is already canceled during cleanup.
		ctx, cancel := contextWithTimeout(10 * time.Second)
		defer cancel()
		if err := e.Client.Delete(ctx, ns); client.IgnoreNotFound(err) != nil {
			t.Errorf("deleting test namespace %s: %v", ns.Name, err)
		}
	})
	return ns.Name
}

// configureAudit makes api write its audit log to path as JSON lines, with
// the policy written beside it: auditlog.ReceivedPolicy, so that a test
// sees the requests of a client it killed that were never answered.
func configureAudit(api *envtest.APIServer, path string) error {
	flags, err := auditlog.APIServerArgsWithPolicy(path, auditlog.ReceivedPolicy)
	if err != nil {
		return err
	}
	args := api.Configure()
	for name, value := range flags {
		args.Set(name, value)
	}
	return nil
}
