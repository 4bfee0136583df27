package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/go-logr/logr"
	"k8s.io/client-go/tools/clientcmd"
	crzap "sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/ray-operator/ray-operator/local/internal/imagestore"
	"github.com/ray-operator/ray-operator/local/internal/node"
	"github.com/ray-operator/ray-operator/local/internal/podinputs"
	"github.com/ray-operator/ray-operator/local/internal/rayvenv"
	"github.com/ray-operator/ray-operator/local/internal/sandbox"
)

// RunNodeIfChild must be called first in the main function (or TestMain)
// of every executable that starts a local cluster: when the executable was
// started as the cluster's node process, it runs the node until SIGTERM
// and exits; otherwise it returns at once.
func RunNodeIfChild() {
	childHook.Store(true)
	if len(os.Args) != 3 || os.Args[1] != nodeProcessArg {
		return
	}
	path := os.Args[2]
	log := crzap.New(crzap.WriteTo(os.Stderr), crzap.ConsoleEncoder(), crzap.UseDevMode(false)).WithName("node")
	if err := runNode(path, log); err != nil {
		log.Error(err, "Node process failed")
		os.Exit(1)
	}
	os.Exit(0)
}

// runNode runs the node of the configuration at path: its sandbox host
// (on the cluster's network, adopting what an earlier node process left
// when the configuration says so) and its agent; it reports readiness on
// descriptor nodeReadyFD and stops the pods and the host on SIGTERM.
func runNode(path string, log logr.Logger) error {
	cfg, err := readNodeConfig(path)
	if err != nil {
		return err
	}
	ctx, stopSignals := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stopSignals()
	host, err := sandbox.NewHost(ctx, sandbox.HostConfig{
		StateDir: cfg.HostStateDir, ExternalNetwork: true, Adopt: cfg.Adopt, Log: log.WithName("sandbox"),
	})
	if err != nil {
		return fmt.Errorf("preparing the pods' sandboxes: %w", err)
	}
	n, err := startAgent(ctx, cfg, host, log)
	if err != nil && cfg.Adopt {
		// The pods it adopted run on for the next node process.
		return errors.Join(err, host.Detach())
	}
	if err != nil {
		return errors.Join(err, host.Close(context.Background()))
	}
	ready := os.NewFile(nodeReadyFD, "ready")
	_, err = fmt.Fprintln(ready, nodeReadyLine)
	_ = ready.Close()
	if err != nil {
		log.Error(err, "Telling the cluster the node is Ready")
	}
	select {
	case <-ctx.Done():
		log.Info("Stopping the node: its pods are stopped as their deletion would")
	case <-n.Done():
		log.Info("The node stopped on its own")
	}
	stopCtx, cancel := context.WithTimeout(context.Background(), nodeStopGrace)
	defer cancel()
	return errors.Join(n.Stop(stopCtx), host.Close(stopCtx))
}

// startAgent starts the node agent of cfg on host.
func startAgent(ctx context.Context, cfg nodeProcessConfig, host *sandbox.Host, log logr.Logger) (*node.Node, error) {
	rest, err := clientcmd.BuildConfigFromFlags("", cfg.Kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("reading the kubeconfig %s: %w", cfg.Kubeconfig, err)
	}
	rest.QPS, rest.Burst = cfg.QPS, cfg.Burst
	ray, err := rayImages(cfg)
	if err != nil {
		return nil, err
	}
	// The images outlive the node process, as a kubelet's do.
	store, err := imagestore.Open(nodeImageStoreDir(cfg.HostStateDir), imagestore.Options{})
	if err != nil {
		return nil, err
	}
	return node.Start(ctx, node.Config{
		Settings:   cfg.Settings,
		RESTConfig: rest,
		Sandboxes:  host,
		Images:     podinputs.DefaultImages(ray, cfg.RedisServer),
		ImageStore: store,
		Log:        log,
	})
}

// rayImages is what cfg's Ray images run: the pinned virtualenv, and the
// installer of other releases when cfg names one.
func rayImages(cfg nodeProcessConfig) (podinputs.RayImages, error) {
	pinned, err := rayvenv.Read(cfg.RayVenvDir)
	if err != nil {
		return podinputs.RayImages{}, fmt.Errorf("the pinned Ray virtualenv: %w", err)
	}
	ray := podinputs.RayImages{Pinned: pinned}
	if cfg.RayInstaller != "" {
		ray.Installer = rayvenv.Installer{Script: cfg.RayInstaller}
	}
	return ray, nil
}

func readNodeConfig(path string) (nodeProcessConfig, error) {
	var cfg nodeProcessConfig
	data, err := os.ReadFile(path)
	if err != nil {
		return cfg, fmt.Errorf("reading the node's configuration: %w", err)
	}
	if err := json.Unmarshal(data, &cfg); err != nil {
		return cfg, fmt.Errorf("reading the node's configuration %s: %w", path, err)
	}
	return cfg, nil
}
