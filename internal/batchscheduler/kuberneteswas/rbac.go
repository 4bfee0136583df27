package kuberneteswas

// The Workloads and PodGroups the plugin keeps, as KubeRay's Helm chart
// grants them when the KubernetesWAS feature gate is on. `make generate`
// writes these markers, and only these, into the ClusterRole
// kuberay-operator-kubernetes-was of
// config/components/batch-scheduler-kubernetes-was.
//
// +kubebuilder:rbac:groups=scheduling.k8s.io,resources=workloads;podgroups,verbs=get;list;watch;create;update;patch;delete
