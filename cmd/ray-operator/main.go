// Command ray-operator runs the Ray operator: the RayCluster, RayJob,
// RayService and RayCronJob controllers, as a drop-in for KubeRay's.
//
// Flags, the --config file and the operator environment variables are read
// once here; docs/operator.md lists them.
package main

import (
	"flag"
	"fmt"
	"os"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/ray-operator/ray-operator/internal/buildinfo"
	"github.com/ray-operator/ray-operator/internal/operator"
)

func main() {
	flags := operator.BindFlags(flag.CommandLine)
	flag.Parse()
	if flags.VersionRequested() {
		fmt.Println(buildinfo.Get())
		return
	}
	if err := run(flags); err != nil {
		fmt.Fprintln(os.Stderr, "ray-operator:", err)
		os.Exit(1)
	}
}

func run(flags *operator.Flags) error {
	settings, err := flags.Resolve(os.LookupEnv)
	if err != nil {
		return err
	}
	restConfig, err := ctrl.GetConfig()
	if err != nil {
		return fmt.Errorf("loading kubeconfig: %w", err)
	}
	return operator.Run(ctrl.SetupSignalHandler(), settings, flags, restConfig)
}
