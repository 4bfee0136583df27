package schedulerplugins

// The PodGroups the plugin creates, as KubeRay's Helm chart grants them when
// batchScheduler.name is scheduler-plugins. `make generate` writes these
// markers, and only these, into the ClusterRole
// kuberay-operator-scheduler-plugins of
// config/components/batch-scheduler-scheduler-plugins.
//
// +kubebuilder:rbac:groups=scheduling.x-k8s.io,resources=podgroups,verbs=get;list;watch;create;delete
