package v1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion names the API group and version every kind in this package
	// is served under.
	GroupVersion = schema.GroupVersion{Group: "ray.io", Version: "v1"}

	// SchemeBuilder collects the kinds of this package; each *_types.go file
	// registers its kinds from an init function.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme registers RayCluster, RayJob, RayService and RayCronJob (and
	// their lists) with a runtime.Scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

// Resource turns a lower-case plural resource name of this group into a
// GroupResource, as API errors and RBAC expect.
func Resource(resource string) schema.GroupResource {
	return GroupVersion.WithResource(resource).GroupResource()
}
