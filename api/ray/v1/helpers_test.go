package v1

import (
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestIsJobTerminal(t *testing.T) {
	cases := map[JobStatus]bool{
		JobStatusNew:       false,
		JobStatusPending:   false,
		JobStatusRunning:   false,
		JobStatusStopped:   true,
		JobStatusSucceeded: true,
		JobStatusFailed:    true,
		"SOMETHING_ELSE":   false,
		"succeeded":        false, // Ray's statuses are upper case; no folding.
	}
	for status, want := range cases {
		t.Run(string(status), func(t *testing.T) {
			if got := IsJobTerminal(status); got != want {
				t.Errorf("IsJobTerminal(%q) = %v, want %v", status, got, want)
			}
		})
	}
}

func TestAllJobStatusesCoversEveryStatus(t *testing.T) {
	want := []JobStatus{"", "PENDING", "RUNNING", "STOPPED", "SUCCEEDED", "FAILED"}
	if !slices.Equal(want, AllJobStatuses) {
		t.Errorf("AllJobStatuses = %q, want %q", AllJobStatuses, want)
	}
}

func TestIsJobDeploymentTerminal(t *testing.T) {
	cases := map[JobDeploymentStatus]bool{
		JobDeploymentStatusNew:              false,
		JobDeploymentStatusInitializing:     false,
		JobDeploymentStatusRunning:          false,
		JobDeploymentStatusComplete:         true,
		JobDeploymentStatusFailed:           true,
		JobDeploymentStatusValidationFailed: false,
		JobDeploymentStatusSuspending:       false,
		JobDeploymentStatusSuspended:        false,
		JobDeploymentStatusRetrying:         false,
		JobDeploymentStatusWaiting:          false,
	}
	for status, want := range cases {
		t.Run(string(status), func(t *testing.T) {
			if got := IsJobDeploymentTerminal(status); got != want {
				t.Errorf("IsJobDeploymentTerminal(%q) = %v, want %v", status, got, want)
			}
		})
	}
}

func TestIsManagedByThisOperator(t *testing.T) {
	cases := map[string]struct {
		managedBy *string
		want      bool
	}{
		"absent":           {managedBy: nil, want: true},
		"kuberay operator": {managedBy: new("ray.io/kuberay-operator"), want: true},
		"multikueue":       {managedBy: new(MultiKueueController), want: false},
		"empty string":     {managedBy: new(""), want: false},
		"other controller": {managedBy: new("example.com/other"), want: false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := IsManagedByThisOperator(tc.managedBy); got != tc.want {
				t.Errorf("IsManagedByThisOperator(%v) = %v, want %v", tc.managedBy, got, tc.want)
			}
		})
	}
}

func TestAddToSchemeRegistersEveryKind(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := AddToScheme(scheme); err != nil {
		t.Fatalf("AddToScheme: %v", err)
	}
	var got []string
	for gvk := range scheme.AllKnownTypes() {
		if gvk.GroupVersion() == GroupVersion {
			got = append(got, gvk.Kind)
		}
	}
	want := []string{
		"RayCluster", "RayClusterList", "RayCronJob", "RayCronJobList",
		"RayJob", "RayJobList", "RayService", "RayServiceList",
	}
	// AddToScheme also registers the meta/v1 option kinds (ListOptions, ...)
	// under the group; keep only ours.
	got = slices.DeleteFunc(got, func(kind string) bool { return !strings.HasPrefix(kind, "Ray") })
	slices.Sort(got)
	if !slices.Equal(want, got) {
		t.Errorf("kinds registered under %s = %q, want %q", GroupVersion, got, want)
	}
	if want := (schema.GroupVersion{Group: "ray.io", Version: "v1"}); GroupVersion != want {
		t.Errorf("GroupVersion = %v, want %v", GroupVersion, want)
	}
}

func TestIsGCSFaultToleranceEnabled(t *testing.T) {
	withOptions := &RayClusterSpec{GcsFaultToleranceOptions: &GcsFaultToleranceOptions{RedisAddress: "redis:6379"}}
	cases := map[string]struct {
		spec        *RayClusterSpec
		annotations map[string]string
		want        bool
	}{
		"nothing":                     {spec: &RayClusterSpec{}, want: false},
		"nil spec, no annotation":     {spec: nil, want: false},
		"options":                     {spec: withOptions, want: true},
		"annotation true":             {spec: &RayClusterSpec{}, annotations: map[string]string{AnnotationFTEnabled: "true"}, want: true},
		"annotation TRUE":             {spec: &RayClusterSpec{}, annotations: map[string]string{AnnotationFTEnabled: "TRUE"}, want: true},
		"annotation false":            {spec: &RayClusterSpec{}, annotations: map[string]string{AnnotationFTEnabled: "false"}, want: false},
		"annotation yes is not true":  {spec: &RayClusterSpec{}, annotations: map[string]string{AnnotationFTEnabled: "yes"}, want: false},
		"options win over annotation": {spec: withOptions, annotations: map[string]string{AnnotationFTEnabled: "false"}, want: true},
		"other annotation":            {spec: &RayClusterSpec{}, annotations: map[string]string{"ray.io/other": "true"}, want: false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := IsGCSFaultToleranceEnabled(tc.spec, tc.annotations); got != tc.want {
				t.Errorf("IsGCSFaultToleranceEnabled() = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestRayJobSpecHelpers(t *testing.T) {
	cases := map[string]struct {
		spec         RayJobSpec
		wantMode     JobSubmissionMode
		wantSelector bool
	}{
		"defaults":       {wantMode: K8sJobMode},
		"explicit mode":  {spec: RayJobSpec{SubmissionMode: HTTPMode}, wantMode: HTTPMode},
		"selector":       {spec: RayJobSpec{ClusterSelector: map[string]string{ClusterSelectorKey: "c"}}, wantMode: K8sJobMode, wantSelector: true},
		"empty selector": {spec: RayJobSpec{ClusterSelector: map[string]string{}}, wantMode: K8sJobMode},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := tc.spec.EffectiveSubmissionMode(); got != tc.wantMode {
				t.Errorf("EffectiveSubmissionMode() = %q, want %q", got, tc.wantMode)
			}
			if got := tc.spec.UsesClusterSelector(); got != tc.wantSelector {
				t.Errorf("UsesClusterSelector() = %v, want %v", got, tc.wantSelector)
			}
		})
	}
}
