// Package operator turns the operator's settings into a running
// controller-runtime manager: scheme, cache scope, metrics and health
// endpoints, leader election, logging, and the controllers.
package operator

import (
	"k8s.io/component-base/featuregate"

	configv1alpha1 "github.com/ray-operator/ray-operator/api/config/v1alpha1"
	"github.com/ray-operator/ray-operator/internal/dashboard"
	"github.com/ray-operator/ray-operator/internal/webhooks"
)

// Settings is everything the operator is started with, read once from
// flags, the configuration file and the environment.
type Settings struct {
	// Config is the defaulted, validated configuration.
	Config configv1alpha1.Configuration
	// Knobs are KubeRay's operator environment variables.
	Knobs configv1alpha1.Knobs
	// Features is the read-only view of the feature gates.
	Features featuregate.FeatureGate
	// Webhooks configure the validating webhooks (on with ENABLE_WEBHOOKS).
	Webhooks webhooks.Options
	// Warnings are non-fatal problems found while reading the settings,
	// to be logged once logging is set up.
	Warnings []string
	// Controllers replaces DefaultControllers when not nil (tests).
	Controllers []Controller
	// GCPercent is the garbage collector target Run sets; 0 leaves the
	// runtime's (GOGC was set).
	GCPercent int
	// Dashboards, when not nil, makes the clients of Ray dashboards instead
	// of plain HTTP (tests and benchmarks with simulated dashboards). The
	// job info cache (AsyncJobInfoQuery) still wraps it; with
	// --use-kubernetes-proxy the proxy's clients are used instead.
	Dashboards dashboard.ClientProvider
	// SkipControllerNameValidation lets one process start several managers
	// one after another (bench-scale's rayjob runs of several sizes):
	// controller-runtime otherwise refuses a second controller named
	// "raycluster" in the same process.
	SkipControllerNameValidation bool
	// PprofAddr is where the manager serves Go's pprof endpoints
	// (--pprof-bind-address); empty or "0" serves none.
	PprofAddr string
}
