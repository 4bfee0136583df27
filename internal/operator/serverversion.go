package operator

import (
	"fmt"

	utilversion "k8s.io/apimachinery/pkg/util/version"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/component-base/featuregate"

	"github.com/ray-operator/ray-operator/internal/features"
)

// minSidecarRestartVersion is the oldest API server SidecarSubmitterRestart
// accepts, as KubeRay: container restart rules (ContainerRestartRules) are
// beta and on by default from Kubernetes 1.35, so no Kubernetes gate has to
// be opted into. Only the API server is checked; kubelets older than 1.35
// ignore the submitter's restartPolicy (it then never restarts).
var minSidecarRestartVersion = utilversion.MustParseGeneric("1.35.0")

// checkServerVersion refuses to start with SidecarSubmitterRestart on when
// the API server at cfg is older than minSidecarRestartVersion or cannot
// tell its version. With the gate off it asks nothing.
func checkServerVersion(gate featuregate.FeatureGate, cfg *rest.Config) error {
	if !gate.Enabled(features.SidecarSubmitterRestart) {
		return nil
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return fmt.Errorf("SidecarSubmitterRestart feature gate enabled but unable to detect K8s version. Feature requires K8s 1.35+: %w", err)
	}
	info, err := dc.ServerVersion()
	if err != nil {
		return fmt.Errorf("SidecarSubmitterRestart feature gate enabled but unable to detect K8s version. Feature requires K8s 1.35+: %w", err)
	}
	return sidecarRestartSupported(info)
}

// sidecarRestartSupported tells, with KubeRay's messages, whether an API
// server of version info supports SidecarSubmitterRestart.
func sidecarRestartSupported(info *version.Info) error {
	v, err := utilversion.ParseGeneric(info.GitVersion)
	if err != nil {
		return fmt.Errorf("Failed to compare K8s version: %w", err) //nolint:staticcheck // KubeRay's message
	}
	if !v.AtLeast(minSidecarRestartVersion) {
		return fmt.Errorf("SidecarSubmitterRestart feature gate requires K8s 1.35+: current version %s is below 1.35", info.GitVersion)
	}
	return nil
}
