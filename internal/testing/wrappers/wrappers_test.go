package wrappers

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/features"
	"github.com/ray-operator/ray-operator/internal/validation"
)

// TestDefaultsAreValid keeps the defaults what the operator accepts, so
// that a test built on them fails for the reason it is about.
func TestDefaultsAreValid(t *testing.T) {
	gates := features.NewGate()
	cases := map[string]*RayServiceWrapper{
		"default":                 MakeRayService("svc", "ns"),
		"other Ray version":       MakeRayService("svc", "ns").ClusterSpec(MakeRayClusterSpec().WorkerGroup("a", 1, 0, 1).RayVersion("2.61.0").Obj()),
		"upgrade type NewCluster": MakeRayService("svc", "ns").UpgradeType(rayv1.RayServiceNewCluster),
		"upgrade type None":       MakeRayService("svc", "ns").UpgradeType(rayv1.RayServiceUpgradeNone),
	}
	for name, w := range cases {
		t.Run(name, func(t *testing.T) {
			rs := w.Obj()
			if err := validation.RayServiceMetadata(rs.ObjectMeta); err != nil {
				t.Errorf("metadata: %v", err)
			}
			if err := validation.RayServiceSpec(rs, gates); err != nil {
				t.Errorf("spec: %v", err)
			}
			if err := validation.RayClusterSpec(&MakeRayCluster("c", "ns").Obj().Spec, nil, gates); err != nil {
				t.Errorf("cluster spec: %v", err)
			}
		})
	}
}

// TestObjReturnsCopies checks that objects from one wrapper share nothing.
func TestObjReturnsCopies(t *testing.T) {
	w := MakeRayService("svc", "ns").Label("team", "a").ActiveApp("app", rayv1.ApplicationStatusRunning)
	first := w.Obj()
	first.Labels["team"] = "b"
	first.Spec.RayClusterSpec.WorkerGroupSpecs[0].GroupName = "changed"
	first.Status.ActiveServiceStatus.Applications["app"] = rayv1.AppStatus{Status: "x"}
	second := w.Obj()
	if diff := cmp.Diff(MakeRayService("svc", "ns").Label("team", "a").ActiveApp("app", rayv1.ApplicationStatusRunning).Obj(), second); diff != "" {
		t.Errorf("a change to one object reached the next (-want +got):\n%s", diff)
	}
}

// TestRayVersionChangesImages checks that RayVersion moves every image, so
// that a version change is a spec change the operator sees.
func TestRayVersionChangesImages(t *testing.T) {
	spec := MakeRayClusterSpec().WorkerGroup("a", 1, 0, 1).WorkerGroup("b", 1, 0, 1).RayVersion("2.61.0").Obj()
	var got []string
	got = append(got, spec.HeadGroupSpec.Template.Spec.Containers[0].Image)
	for _, g := range spec.WorkerGroupSpecs {
		got = append(got, g.Template.Spec.Containers[0].Image)
	}
	want := []string{"rayproject/ray:2.61.0", "rayproject/ray:2.61.0", "rayproject/ray:2.61.0"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("images (-want +got):\n%s", diff)
	}
}

// TestJobDefaultsAreValid keeps MakeRayJob and MakeRayCronJob what the
// operator accepts.
func TestJobDefaultsAreValid(t *testing.T) {
	gates := features.NewGate()
	job := MakeRayJob("job", "ns").Obj()
	if err := validation.RayJobMetadata(job.ObjectMeta); err != nil {
		t.Errorf("RayJob metadata: %v", err)
	}
	if err := validation.RayJobSpec(&job.Spec, job.Annotations, gates); err != nil {
		t.Errorf("RayJob spec: %v", err)
	}
	cj := MakeRayCronJob("cron", "ns").Obj()
	if err := validation.RayCronJobMetadata(cj.ObjectMeta); err != nil {
		t.Errorf("RayCronJob metadata: %v", err)
	}
	if err := validation.RayCronJobSpec(cj, gates); err != nil {
		t.Errorf("RayCronJob spec: %v", err)
	}
}
