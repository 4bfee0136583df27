package v1

import "strings"

// IsGCSFaultToleranceEnabled reports whether a RayCluster with this spec and
// these object annotations runs with GCS fault tolerance: either
// spec.gcsFaultToleranceOptions is set, or the legacy ray.io/ft-enabled
// annotation says "true" (in any letter case).
func IsGCSFaultToleranceEnabled(spec *RayClusterSpec, annotations map[string]string) bool {
	if spec != nil && spec.GcsFaultToleranceOptions != nil {
		return true
	}
	return strings.EqualFold(annotations[AnnotationFTEnabled], "true")
}
