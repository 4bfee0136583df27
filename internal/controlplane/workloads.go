package controlplane

// Kubernetes' workload-aware scheduling (alpha in v1.36): kube-apiserver
// serves scheduling.k8s.io/v1alpha2 Workloads and PodGroups and lets Pods
// name a PodGroup (spec.schedulingGroup), kube-controller-manager runs the
// PodGroup protection controller, and kube-scheduler places a gang's Pods all
// or none. The operator's KubernetesWAS batch scheduler speaks this API, so
// every local control plane (integration tests and ray-local alike) turns it
// on; Pods that name no PodGroup are scheduled as before.
const (
	// WorkloadAPIVersion is the API the control plane serves besides the
	// default ones.
	WorkloadAPIVersion = "scheduling.k8s.io/v1alpha2"
	// featureGenericWorkload enables the Workload API in each component.
	featureGenericWorkload = "GenericWorkload=true"
	// featureGangScheduling enables gang scheduling in kube-scheduler.
	featureGangScheduling = "GangScheduling=true"
)

// workloadAPIServerArgs serve the Workload API.
func workloadAPIServerArgs() []string {
	return []string{"--runtime-config=" + WorkloadAPIVersion + "=true", "--feature-gates=" + featureGenericWorkload}
}

// workloadSchedulerArgs make kube-scheduler gang-schedule PodGroups.
func workloadSchedulerArgs() []string {
	return []string{"--feature-gates=" + featureGenericWorkload + "," + featureGangScheduling}
}

// workloadControllerManagerArgs run the PodGroup protection controller,
// which releases a PodGroup's finalizer once no Pod names it.
func workloadControllerManagerArgs() []string {
	return []string{"--feature-gates=" + featureGenericWorkload}
}
