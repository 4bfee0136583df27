package v1

// ClusterSelectorKey is the spec.clusterSelector key that names the existing
// RayCluster a RayJob runs on (KubeRay's RayJobDefaultClusterSelectorKey).
const ClusterSelectorKey = "ray.io/cluster"

// EffectiveSubmissionMode is spec.submissionMode with its default: the CRD
// defaults an absent mode to K8sJobMode, but objects built in Go (tests,
// the RayJobs a RayCronJob creates before admission) may still carry "".
func (s *RayJobSpec) EffectiveSubmissionMode() JobSubmissionMode {
	if s.SubmissionMode == "" {
		return K8sJobMode
	}
	return s.SubmissionMode
}

// UsesClusterSelector reports whether the RayJob runs on an existing
// cluster chosen by spec.clusterSelector, which the operator must never
// create, change or delete.
func (s *RayJobSpec) UsesClusterSelector() bool {
	return len(s.ClusterSelector) > 0
}

// BlockingRecreate reports whether the next attempt waits for every Pod of
// the previous one to be gone (spec.retryStrategy BlockingRecreate).
func (s *RayJobSpec) BlockingRecreate() bool {
	return s.RetryStrategy != nil && *s.RetryStrategy == RetryBlockingRecreate
}
