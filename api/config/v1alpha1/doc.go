// Package v1alpha1 holds the operator's own configuration: the typed
// Configuration that flags or a --config file set, its defaults and
// validation, and Knobs, the operator environment variables that KubeRay reads.
//
// A configuration file written for KubeRay's operator
// (apiVersion config.ray.io/v1alpha1, kind Configuration) loads unchanged.
package v1alpha1

import "k8s.io/apimachinery/pkg/runtime/schema"

// GroupVersion is the API group and version of a configuration file.
var GroupVersion = schema.GroupVersion{Group: "config.ray.io", Version: "v1alpha1"}

// Kind is the kind of a configuration file.
const Kind = "Configuration"
