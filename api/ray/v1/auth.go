package v1

// IsAuthEnabled reports whether a RayCluster with this spec runs Ray with
// token authentication: spec.authOptions is set and its mode is not
// "disabled". An unset mode means "token", as AuthOptions.Mode documents.
// Every part of the operator that decides about tokens (Pod environment,
// generated Secret, submitter, dashboard client) asks this one function.
func IsAuthEnabled(spec *RayClusterSpec) bool {
	return spec != nil && spec.AuthOptions != nil && spec.AuthOptions.Mode != AuthModeDisabled
}
