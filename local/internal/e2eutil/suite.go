package e2eutil

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/ray-operator/ray-operator/internal/controlplane"
	"github.com/ray-operator/ray-operator/internal/testing/testenv"
	localcluster "github.com/ray-operator/ray-operator/local/internal/cluster"
	"github.com/ray-operator/ray-operator/local/internal/node"
)

// Environment variables the make targets that run the suites set.
const (
	// VenvEnv is the cached Ray virtualenv (hack/ray-venv.sh).
	VenvEnv = "RAY_OPERATOR_RAY_VENV"
	// RedisEnv is Debian's redis-server, for the Redis images.
	RedisEnv = "RAY_OPERATOR_REDIS_SERVER"
)

// StopTimeout bounds the cluster's stop at the end of a suite.
const StopTimeout = 2 * time.Minute

// SuiteOptions says what one package's suite needs beyond what every
// suite does (RunSuite). The zero value of each field is what most
// packages want.
type SuiteOptions struct {
	// Name begins each line the suite prints ("local e2e (gateway)").
	Name string
	// StateDirPattern names the state directory (os.MkdirTemp's pattern).
	StateDirPattern string
	// MakeTarget is the make target that sets the environment, named in
	// the message when a variable is missing.
	MakeTarget string
	// EnableEnv, when set, names a variable without which the package
	// runs nothing: packages that `make test-e2e-local` (./test/e2e/...)
	// reaches but another target runs. EnableValue is the value it must
	// have; empty, any non-empty value enables the package.
	EnableEnv, EnableValue string
	// NoCRDs starts the cluster without the repository's CRDs: the
	// install suite's Helm chart installs them.
	NoCRDs bool
	// Cluster carries the package's own cluster options (Kueue, Gateway,
	// CertManager, SyncFrequency, RayInstaller, AuditLogPath, ...); the
	// suite sets StateDir, CRDDirs, RayVenvDir, RedisServer and, with
	// Capacity, Capacity and CapacityNote.
	Cluster localcluster.Options
	// Capacity chooses what the node advertises; nil leaves the node's
	// default.
	Capacity func() (corev1.ResourceList, string, error)
	// Schemes are added to testenv.NewScheme's for the suite's clients.
	Schemes []func(*runtime.Scheme) error
	// Operator runs the operator in-process (RunOperator) for the whole
	// suite with OperatorArgs, logging into the state directory's
	// operator.log. Suites that run the operator otherwise (as a process
	// per test, or installed by Helm) leave it false.
	Operator     bool
	OperatorArgs []string
	// DiscardClientLogs silences controller-runtime's global logger: the
	// install suite's clients log nothing worth reading.
	DiscardClientLogs bool
	// Prepare runs once the state directory exists and before the
	// cluster starts: what the package builds or chooses first (an
	// image, a registry port, a seed). It may change cluster.
	Prepare func(ctx context.Context, s *Suite, cluster *localcluster.Options) error
	// Started receives the suite before the tests run: the package keeps
	// it for its tests.
	Started func(*Suite) error
	// Finished runs after the tests, before the cluster stops, with their
	// exit code (a table of results, a seed to rerun with).
	Finished func(code int)
}

// Suite is a package's local cluster with its clients, and the operator
// when SuiteOptions.Operator runs it.
type Suite struct {
	Kube
	// WatchClient is Kube.Client, with Watch.
	WatchClient client.WithWatch
	// Cluster is the local cluster.
	Cluster *localcluster.Cluster
	// Root is the repository; StateDir the suite's state directory, kept
	// when a test failed.
	Root, StateDir string

	opts         SuiteOptions
	opErr        chan error
	stopOperator context.CancelFunc
}

// RunSuite is a local e2e package's TestMain: it runs the node when the
// binary was started as the cluster's node, skips the package with -short
// (or without opts.EnableEnv), starts the cluster (and the operator),
// runs the tests, stops what it started, keeps the state directory when a
// test failed and exits with the tests' code, or 1 when the cluster did
// not start or stop.
func RunSuite(m *testing.M, opts SuiteOptions) {
	localcluster.RunNodeIfChild()
	flag.Parse()
	if opts.DiscardClientLogs {
		ctrllog.SetLogger(logr.Discard())
	}
	if reason := opts.skipReason(testing.Short()); reason != "" {
		fmt.Printf("%s: skipped (%s)\n", opts.Name, reason)
		os.Exit(0)
	}
	os.Exit(runSuite(m, opts))
}

// skipReason says why the package runs nothing (short: go test -short),
// or "".
func (o SuiteOptions) skipReason(short bool) string {
	value := os.Getenv(o.EnableEnv)
	switch {
	case short:
		return "-short"
	case o.EnableEnv == "":
		return ""
	case o.EnableValue == "" && value == "":
		return fmt.Sprintf("%s unset: make %s sets it", o.EnableEnv, o.MakeTarget)
	case o.EnableValue != "" && value != o.EnableValue:
		return fmt.Sprintf("%s is not %s: make %s sets it", o.EnableEnv, o.EnableValue, o.MakeTarget)
	}
	return ""
}

func runSuite(m *testing.M, opts SuiteOptions) int {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	began := time.Now()
	s := &Suite{opts: opts, opErr: make(chan error, 1)}
	err := s.start(ctx)
	if err == nil && opts.Started != nil {
		err = opts.Started(s)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: starting: %v\n", opts.Name, err)
		s.stop(1)
		return 1
	}
	timer := dumpBeforeTimeout(testTimeout(), timeoutDumpLead, s.printNodeDump)
	code := m.Run()
	if timer != nil {
		timer.Stop()
	}
	if opts.Finished != nil {
		opts.Finished(code)
	}
	code = s.stop(code)
	fmt.Printf("%s: %v in all\n", opts.Name, time.Since(began).Round(time.Second))
	return code
}

// start checks the machine and the environment, then starts the cluster,
// the clients and the operator.
func (s *Suite) start(ctx context.Context) error {
	if err := s.checkEnv(); err != nil {
		return err
	}
	var err error
	if s.StateDir, err = os.MkdirTemp("", s.opts.StateDirPattern); err != nil {
		return err
	}
	cluster, err := s.clusterOptions()
	if err != nil {
		return err
	}
	if s.opts.Prepare != nil {
		if err := s.opts.Prepare(ctx, s, &cluster); err != nil {
			return err
		}
	}
	if err := waitLaterTools(ctx, cluster, func(tools, lock string) {
		fmt.Fprintf(os.Stderr, "%s: waiting for the background build of %s (%s held; its log: .cache/later-tools.log)\n", s.opts.Name, tools, lock)
	}); err != nil {
		return err
	}
	began := time.Now()
	if s.Cluster, err = localcluster.Start(ctx, cluster); err != nil {
		return err
	}
	fmt.Printf("%s: cluster ready in %v (state in %s)\n", s.opts.Name, time.Since(began).Round(time.Millisecond), s.StateDir)
	if cluster.CapacityNote != "" {
		fmt.Printf("%s: the node advertises %s\n", s.opts.Name, cluster.CapacityNote)
	}
	if err := s.connect(); err != nil {
		return err
	}
	if !s.opts.Operator {
		return nil
	}
	return s.startOperator(s.opts.OperatorArgs)
}

// checkEnv fails with what is missing: the virtualenv, a machine that can
// run pods, the repository.
func (s *Suite) checkEnv() error {
	if os.Getenv(VenvEnv) == "" {
		return fmt.Errorf("%s is not set (make %s sets it from hack/ray-venv.sh)", VenvEnv, s.opts.MakeTarget)
	}
	if err := localcluster.CanHostPods(); err != nil {
		return fmt.Errorf("this machine cannot run real pods: %w", err)
	}
	wd, err := os.Getwd()
	if err != nil {
		return err
	}
	s.Root, err = controlplane.ModuleRoot(wd)
	return err
}

// clusterOptions are the package's cluster options with what every suite
// sets.
func (s *Suite) clusterOptions() (localcluster.Options, error) {
	o := s.opts.Cluster
	o.StateDir = s.StateDir
	o.RayVenvDir = os.Getenv(VenvEnv)
	o.RedisServer = os.Getenv(RedisEnv)
	if !s.opts.NoCRDs {
		o.CRDDirs = []string{filepath.Join(s.Root, "config", "crd", "bases")}
	}
	if s.opts.Capacity != nil {
		var err error
		if o.Capacity, o.CapacityNote, err = s.opts.Capacity(); err != nil {
			return o, err
		}
	}
	return o, nil
}

// connect builds the suite's clients from the cluster's admin config.
func (s *Suite) connect() error {
	scheme, err := testenv.NewScheme(s.opts.Schemes...)
	if err != nil {
		return err
	}
	cfg := s.Cluster.RESTConfig()
	if s.WatchClient, err = client.NewWithWatch(cfg, client.Options{Scheme: scheme}); err != nil {
		return err
	}
	s.Client = s.WatchClient
	s.Kubeconfig = s.Cluster.KubeconfigPath()
	s.Clientset, err = kubernetes.NewForConfig(cfg)
	return err
}

// stop stops the operator and the cluster, removes the state directory
// when code is 0 and says where it is kept otherwise; it returns code, or
// 1 when the cluster did not stop.
func (s *Suite) stop(code int) int {
	if s.stopOperator != nil {
		s.stopOperator()
		if err := <-s.opErr; err != nil {
			fmt.Fprintf(os.Stderr, "%s: operator: %v\n", s.opts.Name, err)
		}
	}
	if s.Cluster != nil {
		ctx, cancel := context.WithTimeout(context.Background(), StopTimeout)
		defer cancel()
		if err := s.Cluster.Stop(ctx); err != nil {
			fmt.Fprintf(os.Stderr, "%s: stopping the local cluster: %v\n", s.opts.Name, err)
			code = 1
		}
	}
	switch {
	case s.StateDir == "":
	case code == 0:
		_ = os.RemoveAll(s.StateDir)
	default:
		fmt.Printf("%s: state and logs kept in %s\n", s.opts.Name, s.StateDir)
	}
	return code
}

// startOperator runs the in-process operator with args.
func (s *Suite) startOperator(args []string) error {
	var ctx context.Context
	ctx, s.stopOperator = context.WithCancel(context.Background())
	return RunOperator(ctx, s.Cluster.RESTConfig(), filepath.Join(s.StateDir, "operator.log"), s.opErr, args...)
}

// RestartOperator stops the suite's in-process operator and starts it
// again with args instead of SuiteOptions.OperatorArgs. When it cannot
// start, the error stands in for what the operator returns, so that the
// suite's stop, which waits for that, still ends.
func (s *Suite) RestartOperator(args []string) error {
	s.stopOperator()
	if err := <-s.opErr; err != nil {
		fmt.Fprintf(os.Stderr, "%s: operator stopped for a restart: %v\n", s.opts.Name, err)
	}
	if err := s.startOperator(args); err != nil {
		s.opErr <- err
		return fmt.Errorf("restarting the operator with %v: %w", args, err)
	}
	return nil
}

// ParallelNode is SuiteOptions.Capacity for a suite whose waiting tests
// run in parallel (ParallelCapacity).
func ParallelNode() (corev1.ResourceList, string, error) {
	c, err := ParallelCapacity()
	return c, "", err
}

// MakeRunNode is SuiteOptions.Capacity for a suite whose node advertises
// what `make run`'s does with no flags (node.ChooseCapacity).
func MakeRunNode() (corev1.ResourceList, string, error) {
	machine, err := node.ReadMachine()
	if err != nil {
		return nil, "", err
	}
	c, err := node.ChooseCapacity(machine, "", "", "node-cpu", "node-memory")
	if err != nil {
		return nil, "", err
	}
	return c.Resources, c.Note, nil
}
