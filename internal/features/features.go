// Package features defines the operator's feature gates with KubeRay's
// names, defaults and maturity.
//
// There is no package-level gate: main builds one with NewGate, sets it from
// the configuration and --feature-gates, and hands controllers the read-only
// featuregate.FeatureGate view, so tests can run with different gates side by
// side.
package features

import (
	"fmt"
	"maps"
	"slices"

	"k8s.io/component-base/featuregate"
)

// Feature gates, as KubeRay names them.
const (
	// RayClusterStatusConditions adds conditions to RayCluster status.
	RayClusterStatusConditions featuregate.Feature = "RayClusterStatusConditions"
	// RayJobDeletionPolicy enables RayJob spec.deletionStrategy.
	RayJobDeletionPolicy featuregate.Feature = "RayJobDeletionPolicy"
	// RayMultiHostIndexing labels the Pods of multi-host worker groups with
	// their replica and host indexes.
	RayMultiHostIndexing featuregate.Feature = "RayMultiHostIndexing"
	// RayServiceIncrementalUpgrade enables the NewClusterWithIncrementalUpgrade
	// RayService upgrade strategy (Gateway API traffic shifting).
	RayServiceIncrementalUpgrade featuregate.Feature = "RayServiceIncrementalUpgrade"
	// RayCronJob starts the RayCronJob controller.
	RayCronJob featuregate.Feature = "RayCronJob"
	// AsyncJobInfoQuery queries Ray job info in the background through a cache.
	AsyncJobInfoQuery featuregate.Feature = "AsyncJobInfoQuery"
	// SidecarSubmitterRestart makes the SidecarMode submitter container
	// restart on failure (container restartPolicy OnFailure, Kubernetes
	// 1.35+; the operator refuses older API servers) with a command that
	// submits only a job Ray does not know yet, and fails the RayJob only
	// after the submitter restarted twice. It needs Ray 2.54+ in the head
	// (older `ray job logs --follow` exits 0 when its stream drops), which
	// nothing checks, as in KubeRay.
	SidecarSubmitterRestart featuregate.Feature = "SidecarSubmitterRestart"
	// RayClusterNetworkPolicy admits RayCluster spec.networkPolicy and
	// makes the RayCluster controller create the cluster's NetworkPolicies;
	// with it off, the operator removes at start-up those a run with it on
	// made. The local cluster enforces NetworkPolicies (kube-network-policies
	// on its node).
	RayClusterNetworkPolicy featuregate.Feature = "RayClusterNetworkPolicy"
	// GCSFaultToleranceEmbeddedStorage admits the embedded RocksDB backend of
	// GCS fault tolerance (gcsFaultToleranceOptions.backend: rocksdb): the
	// RayCluster controller provides the claim <cluster>-gcs-pvc (or uses the
	// user's claimName) and the head mounts it at /data/gcs.
	GCSFaultToleranceEmbeddedStorage featuregate.Feature = "GCSFaultToleranceEmbeddedStorage"
	// RayClusterMTLS admits RayCluster spec.tlsOptions; with enabled true the
	// RayCluster controller makes the cluster's cert-manager Issuers and
	// Certificates, owns their Secrets by them, holds Pods back until they
	// are issued and gives the Pods the TLS mount, variables and IP SAN wait.
	// On the local cluster cert-manager's own controller issues the
	// certificates and real Ray runs with TLS (local e2e TestRayClusterMTLS).
	// With --mtls-certificates=operator (or the cluster's annotation
	// ray.io/mtls-certificates) the operator issues the same certificates
	// itself and renews them (local e2e TestRayClusterMTLSOperatorPKI).
	RayClusterMTLS featuregate.Feature = "RayClusterMTLS"
	// RayClusterHistoryServer admits historyServerOptions.collectorOptions:
	// every Ray Pod gets the ray-history-collector sidecar, a /tmp/ray shared
	// with the Ray container and the Ray event export env.
	RayClusterHistoryServer featuregate.Feature = "RayClusterHistoryServer"
	// KubernetesWAS is KubeRay's gate for gang scheduling through the
	// Kubernetes Workload API: it selects the kubernetes-was-v1alpha2 batch
	// scheduler (package batchscheduler/kuberneteswas), which keeps a
	// scheduling.k8s.io/v1alpha2 Workload and PodGroup per gang-labeled
	// RayCluster and has its Pods name the PodGroup. It excludes
	// --batch-scheduler and --enable-batch-scheduler.
	KubernetesWAS featuregate.Feature = "KubernetesWAS"
)

// Specs returns every gate with its default and maturity. The map is a copy.
func Specs() map[featuregate.Feature]featuregate.FeatureSpec {
	return map[featuregate.Feature]featuregate.FeatureSpec{
		RayClusterStatusConditions:       {Default: true, PreRelease: featuregate.Beta},
		RayJobDeletionPolicy:             {Default: true, PreRelease: featuregate.Beta},
		RayMultiHostIndexing:             {Default: true, PreRelease: featuregate.Beta},
		RayServiceIncrementalUpgrade:     {Default: true, PreRelease: featuregate.Beta},
		RayCronJob:                       {Default: false, PreRelease: featuregate.Alpha},
		AsyncJobInfoQuery:                {Default: false, PreRelease: featuregate.Alpha},
		SidecarSubmitterRestart:          {Default: false, PreRelease: featuregate.Alpha},
		RayClusterNetworkPolicy:          {Default: false, PreRelease: featuregate.Alpha},
		GCSFaultToleranceEmbeddedStorage: {Default: false, PreRelease: featuregate.Alpha},
		RayClusterMTLS:                   {Default: false, PreRelease: featuregate.Alpha},
		RayClusterHistoryServer:          {Default: false, PreRelease: featuregate.Alpha},
		KubernetesWAS:                    {Default: false, PreRelease: featuregate.Alpha},
	}
}

// NewGate returns a mutable gate that knows every feature at its default.
func NewGate() featuregate.MutableFeatureGate {
	gate := featuregate.NewFeatureGate()
	if err := gate.Add(Specs()); err != nil {
		// Specs is a constant table; a failure here is a programming error.
		panic(fmt.Sprintf("features: registering gates: %v", err))
	}
	return gate
}

// Build returns a gate set first from fromConfig (the configuration file's
// featureGates) and then from flag (--feature-gates, "A=true,B=false"), so
// the flag wins. Unknown names are errors.
func Build(fromConfig map[string]bool, flag string) (featuregate.FeatureGate, error) {
	gate := NewGate()
	if err := gate.SetFromMap(fromConfig); err != nil {
		return nil, fmt.Errorf("featureGates in configuration: %w", err)
	}
	if err := gate.Set(flag); err != nil {
		return nil, fmt.Errorf("--feature-gates %q: %w", flag, err)
	}
	return gate, nil
}

// State returns every known gate's current value, for logging at start-up.
func State(gate featuregate.FeatureGate) map[string]bool {
	specs := Specs()
	out := make(map[string]bool, len(specs))
	for _, f := range slices.Sorted(maps.Keys(specs)) {
		out[string(f)] = gate.Enabled(f)
	}
	return out
}
