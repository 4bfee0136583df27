package raycluster

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/buildinfo"
)

func recreateCluster(strategy rayv1.RayClusterUpgradeType) *rayv1.RayCluster {
	return makeCluster("rc").worker("small", 1).with(func(rc *rayv1.RayCluster) {
		rc.Spec.UpgradeStrategy = &rayv1.RayClusterUpgradeStrategy{Type: ptr.To(strategy)}
	}).obj()
}

func TestRecreateUpgrade(t *testing.T) {
	cases := map[string]struct {
		strategy     rayv1.RayClusterUpgradeType
		headVersion  string // overwrites the head's operator version first
		change       func(*rayv1.RayCluster)
		wantRecreate bool
	}{
		"template change recreates": {
			strategy: rayv1.RayClusterRecreate,
			change: func(rc *rayv1.RayCluster) {
				rc.Spec.HeadGroupSpec.Template.Spec.Containers[0].Image = "rayproject/ray:2.53.0"
			},
			wantRecreate: true,
		},
		"replica change does not": {
			strategy: rayv1.RayClusterRecreate,
			change:   func(rc *rayv1.RayCluster) { rc.Spec.WorkerGroupSpecs[0].Replicas = ptr.To[int32](2) },
		},
		"strategy None does not": {
			strategy: rayv1.RayClusterUpgradeNone,
			change: func(rc *rayv1.RayCluster) {
				rc.Spec.HeadGroupSpec.Template.Spec.Containers[0].Image = "rayproject/ray:2.53.0"
			},
		},
		"head made by another operator version: hash refreshed instead": {
			strategy:    rayv1.RayClusterRecreate,
			headVersion: "v1.4.0",
			change: func(rc *rayv1.RayCluster) {
				rc.Spec.HeadGroupSpec.Template.Spec.Containers[0].Image = "rayproject/ray:2.53.0"
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, Options{}, recreateCluster(tc.strategy))
			h.mustReconcile("rc", 1)
			head := h.pods(headPodLabels)[0]
			wantHash, err := specHash(&h.cluster("rc").Spec)
			if err != nil {
				t.Fatal(err)
			}
			if head.Annotations[annotationRecreateHash] != wantHash || head.Annotations[annotationKubeRayVersion] != buildinfo.Version() {
				t.Fatalf("head annotations = %v, want the spec hash %s and operator version %s whatever the strategy", head.Annotations, wantHash, buildinfo.Version())
			}
			if tc.headVersion != "" {
				head.Annotations[annotationKubeRayVersion] = tc.headVersion
				if err := h.c.Update(t.Context(), &head); err != nil {
					t.Fatal(err)
				}
			}
			h.eventReasons()
			rc := h.cluster("rc")
			tc.change(rc)
			h.update(rc)
			h.mustReconcile("rc", 1)

			heads := h.pods(headPodLabels)
			recreated := len(heads) == 0
			if recreated != tc.wantRecreate {
				t.Fatalf("recreated = %v (head Pods %d), want %v", recreated, len(heads), tc.wantRecreate)
			}
			if !tc.wantRecreate {
				if heads[0].Name != head.Name {
					t.Errorf("head replaced without a recreation")
				}
				if tc.headVersion != "" && heads[0].Annotations[annotationKubeRayVersion] != buildinfo.Version() {
					t.Errorf("head version annotation = %q, want it refreshed", heads[0].Annotations[annotationKubeRayVersion])
				}
				return
			}
			if diff := cmp.Diff([]string{"Normal DeletedPod"}, h.eventReasons()); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			h.mustReconcile("rc", 1)
			newHead := h.pods(headPodLabels)
			if len(newHead) != 1 || newHead[0].Annotations[annotationRecreateHash] == head.Annotations[annotationRecreateHash] {
				t.Errorf("new head %v does not carry the new spec hash", newHead)
			}
			if got := newHead[0].Spec.Containers[0].Image; got != "rayproject/ray:2.53.0" {
				t.Errorf("new head image = %s", got)
			}
		})
	}
}
