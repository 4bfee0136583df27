package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion names the API group and version every kind in this package
	// is served under.
	GroupVersion = schema.GroupVersion{Group: "ray.io", Version: "v1"}

	// SchemeGroupVersion is GroupVersion under the name k8s.io/code-generator's
	// clientset and listers (pkg/client) refer to, and KubeRay's API package
	// exports too.
	SchemeGroupVersion = GroupVersion

	// SchemeBuilder registers this package's kinds with a runtime.Scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme registers RayCluster, RayJob, RayService and RayCronJob (and
	// their lists) with a runtime.Scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

// Resource turns a lower-case plural resource name of this group into a
// GroupResource, as API errors and RBAC expect.
func Resource(resource string) schema.GroupResource {
	return GroupVersion.WithResource(resource).GroupResource()
}

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(GroupVersion,
		&RayCluster{}, &RayClusterList{},
		&RayJob{}, &RayJobList{},
		&RayService{}, &RayServiceList{},
		&RayCronJob{}, &RayCronJobList{},
	)
	metav1.AddToGroupVersion(scheme, GroupVersion)
	return nil
}
