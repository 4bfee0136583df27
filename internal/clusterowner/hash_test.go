package clusterowner

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

func hashSpec(groups ...string) *rayv1.RayClusterSpec {
	spec := &rayv1.RayClusterSpec{RayVersion: "2.60.0"}
	spec.HeadGroupSpec.Template.Spec.Containers = []corev1.Container{{Name: "ray-head", Image: "rayproject/ray:2.60.0"}}
	for _, g := range groups {
		w := rayv1.WorkerGroupSpec{GroupName: g, Replicas: ptr.To[int32](1), MinReplicas: ptr.To[int32](0), MaxReplicas: ptr.To[int32](5)}
		w.Template.Spec.Containers = []corev1.Container{{Name: "ray-worker", Image: "rayproject/ray:2.60.0"}}
		spec.WorkerGroupSpecs = append(spec.WorkerGroupSpecs, w)
	}
	return spec
}

func mustHash(t *testing.T, spec *rayv1.RayClusterSpec) string {
	t.Helper()
	h, err := SpecHash(spec)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestSpecHashIgnoresWhatRunningClustersChange(t *testing.T) {
	base := mustHash(t, hashSpec("small", "large"))
	muted := map[string]func(*rayv1.RayClusterSpec){
		"replicas":        func(s *rayv1.RayClusterSpec) { s.WorkerGroupSpecs[0].Replicas = ptr.To[int32](7) },
		"minReplicas":     func(s *rayv1.RayClusterSpec) { s.WorkerGroupSpecs[1].MinReplicas = ptr.To[int32](2) },
		"maxReplicas":     func(s *rayv1.RayClusterSpec) { s.WorkerGroupSpecs[1].MaxReplicas = ptr.To[int32](20) },
		"workersToDelete": func(s *rayv1.RayClusterSpec) { s.WorkerGroupSpecs[0].ScaleStrategy.WorkersToDelete = []string{"p"} },
		"suspend":         func(s *rayv1.RayClusterSpec) { s.Suspend = ptr.To(true) },
		"upgradeStrategy": func(s *rayv1.RayClusterSpec) { s.UpgradeStrategy = &rayv1.RayClusterUpgradeStrategy{} },
		"head tolerations": func(s *rayv1.RayClusterSpec) {
			s.HeadGroupSpec.Template.Spec.Tolerations = []corev1.Toleration{{Key: "k"}}
		},
		"worker tolerations": func(s *rayv1.RayClusterSpec) {
			s.WorkerGroupSpecs[1].Template.Spec.Tolerations = []corev1.Toleration{{Key: "k"}}
		},
		"head scheduling gates": func(s *rayv1.RayClusterSpec) {
			s.HeadGroupSpec.Template.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: "g"}}
		},
		"worker scheduling gates": func(s *rayv1.RayClusterSpec) {
			s.WorkerGroupSpecs[0].Template.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: "g"}}
		},
	}
	for name, mutate := range muted {
		t.Run("muted "+name, func(t *testing.T) {
			s := hashSpec("small", "large")
			mutate(s)
			if got := mustHash(t, s); got != base {
				t.Errorf("hash changed to %s, want %s", got, base)
			}
		})
	}
	counted := map[string]func(*rayv1.RayClusterSpec){
		"rayVersion":   func(s *rayv1.RayClusterSpec) { s.RayVersion = "2.61.0" },
		"head image":   func(s *rayv1.RayClusterSpec) { s.HeadGroupSpec.Template.Spec.Containers[0].Image = "other" },
		"worker image": func(s *rayv1.RayClusterSpec) { s.WorkerGroupSpecs[1].Template.Spec.Containers[0].Image = "other" },
		"group name":   func(s *rayv1.RayClusterSpec) { s.WorkerGroupSpecs[0].GroupName = "tiny" },
	}
	for name, mutate := range counted {
		t.Run("counted "+name, func(t *testing.T) {
			s := hashSpec("small", "large")
			mutate(s)
			if got := mustHash(t, s); got == base {
				t.Error("hash did not change")
			}
		})
	}
	t.Run("the spec hashed is not modified", func(t *testing.T) {
		s := hashSpec("small")
		s.Suspend = ptr.To(true)
		mustHash(t, s)
		if s.WorkerGroupSpecs[0].Replicas == nil || s.Suspend == nil {
			t.Error("SpecHash cleared fields of its argument")
		}
	})
}

func TestCompare(t *testing.T) {
	annotated := func(spec *rayv1.RayClusterSpec) *rayv1.RayCluster {
		c := &rayv1.RayCluster{Spec: *spec}
		if err := Annotate(c); err != nil {
			t.Fatal(err)
		}
		return c
	}
	tests := map[string]struct {
		cluster *rayv1.RayCluster
		desired *rayv1.RayClusterSpec
		want    SpecMatch
	}{
		"same spec": {cluster: annotated(hashSpec("a")), desired: hashSpec("a"), want: SpecSame},
		"only replicas changed": {cluster: annotated(hashSpec("a")), desired: func() *rayv1.RayClusterSpec {
			s := hashSpec("a")
			s.WorkerGroupSpecs[0].Replicas = ptr.To[int32](9)
			return s
		}(), want: SpecSame},
		"a group appended":       {cluster: annotated(hashSpec("a")), desired: hashSpec("a", "b"), want: SpecAppended},
		"two groups appended":    {cluster: annotated(hashSpec("a")), desired: hashSpec("a", "b", "c"), want: SpecAppended},
		"a group inserted first": {cluster: annotated(hashSpec("a")), desired: hashSpec("b", "a"), want: SpecDifferent},
		"a group removed":        {cluster: annotated(hashSpec("a", "b")), desired: hashSpec("a"), want: SpecDifferent},
		"appended and changed":   {cluster: annotated(hashSpec("a")), desired: func() *rayv1.RayClusterSpec { s := hashSpec("a", "b"); s.RayVersion = "x"; return s }(), want: SpecDifferent},
		"image changed": {cluster: annotated(hashSpec("a")), desired: func() *rayv1.RayClusterSpec {
			s := hashSpec("a")
			s.WorkerGroupSpecs[0].Template.Spec.Containers[0].Image = "x"
			return s
		}(), want: SpecDifferent},
		"no annotations": {cluster: &rayv1.RayCluster{Spec: *hashSpec("a")}, desired: hashSpec("a"), want: SpecDifferent},
		"unparsable group count": {cluster: func() *rayv1.RayCluster {
			c := annotated(hashSpec("a"))
			c.Annotations[rayv1.LabelNumWorkerGroups] = "x"
			return c
		}(), desired: hashSpec("a", "b"), want: SpecDifferent},
		"group count from another": {cluster: func() *rayv1.RayCluster {
			c := annotated(hashSpec("a"))
			c.Annotations[rayv1.LabelNumWorkerGroups] = "-1"
			return c
		}(), desired: hashSpec("a", "b"), want: SpecDifferent},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := Compare(tc.cluster, tc.desired)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("Compare = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestAnnotate(t *testing.T) {
	c := &rayv1.RayCluster{Spec: *hashSpec("a", "b", "c")}
	if err := Annotate(c); err != nil {
		t.Fatal(err)
	}
	if got := c.Annotations[rayv1.LabelNumWorkerGroups]; got != "3" {
		t.Errorf("num worker groups = %q, want 3", got)
	}
	if got, want := c.Annotations[rayv1.LabelHashWithoutReplicas], mustHash(t, hashSpec("a", "b", "c")); got != want {
		t.Errorf("hash = %q, want %q", got, want)
	}
}
