package volcano

// The PodGroups the plugin creates and resizes, as KubeRay's Helm chart
// grants them when batchScheduler.name is volcano. `make generate` writes
// these markers, and only these, into the ClusterRole
// kuberay-operator-volcano of config/components/batch-scheduler-volcano.
//
// +kubebuilder:rbac:groups=scheduling.volcano.sh,resources=podgroups,verbs=get;list;watch;create;update;delete
