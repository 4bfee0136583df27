package validation

import "k8s.io/component-base/featuregate"

// Feature gates the spec rules consult. Their names are KubeRay's.
const (
	FeatureRayJobDeletionPolicy             featuregate.Feature = "RayJobDeletionPolicy"
	FeatureRayClusterHistoryServer          featuregate.Feature = "RayClusterHistoryServer"
	FeatureRayClusterNetworkPolicy          featuregate.Feature = "RayClusterNetworkPolicy"
	FeatureRayClusterMTLS                   featuregate.Feature = "RayClusterMTLS"
	FeatureGCSFaultToleranceEmbeddedStorage featuregate.Feature = "GCSFaultToleranceEmbeddedStorage"
)
