package operator

// Permissions the operator itself needs, beyond those its controllers
// declare next to their reconcilers. `make generate` collects every
// +kubebuilder:rbac marker under internal/ into the ClusterRole
// config/rbac/role.yaml (named kuberay-operator, as KubeRay's).
//
// Leader election: the manager holds a coordination.k8s.io Lease (client-go
// gets, creates and updates it) and announces a new leader with a core/v1
// Event through controller-runtime's deprecated recorder, which creates and
// patches Events. The Lease lives in the operator's namespace, or in
// --leader-election-namespace; granting it cluster-wide, as KubeRay does,
// lets that flag name any namespace.
//
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;list;watch;create;update;patch
// +kubebuilder:rbac:groups=core,resources=events,verbs=create;patch;update
