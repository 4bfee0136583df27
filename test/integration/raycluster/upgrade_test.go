package raycluster_test

import (
	"testing"

	"k8s.io/utils/ptr"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

func TestRecreateUpgradeReplacesEveryPod(t *testing.T) {
	w := newWorld(t)
	rc := w.newCluster("recreate", group("small", 2))
	rc.Spec.UpgradeStrategy = &rayv1.RayClusterUpgradeStrategy{Type: ptr.To(rayv1.RayClusterRecreate)}
	w.Create(rc)
	before := w.WaitPods("recreate", nil, 3)
	old := map[string]bool{}
	for _, p := range before {
		old[p.Name] = true
	}

	// Scaling is not a spec change that recreates.
	w.edit("recreate", func(rc *rayv1.RayCluster) { rc.Spec.WorkerGroupSpecs[0].Replicas = ptr.To[int32](3) })
	w.WaitPods("recreate", nil, 4)
	for _, p := range w.Pods("recreate", nil) {
		old[p.Name] = true
	}
	if n := len(w.Pods("recreate", headLabels())); n != 1 || !old[w.Pods("recreate", headLabels())[0].Name] {
		t.Fatal("scaling replaced the head")
	}

	w.edit("recreate", func(rc *rayv1.RayCluster) {
		rc.Spec.WorkerGroupSpecs[0].Template.Spec.Containers[0].Image = "rayproject/ray:2.53.0"
	})
	w.Eventually("every Pod replaced with the new template", func() (bool, error) {
		pods := w.Pods("recreate", nil)
		if len(pods) != 4 {
			return false, nil
		}
		for _, p := range pods {
			if old[p.Name] {
				return false, nil
			}
			if p.Labels[rayv1.LabelNodeType] == "worker" && p.Spec.Containers[0].Image != "rayproject/ray:2.53.0" {
				return false, nil
			}
		}
		return true, nil
	})
	w.WaitEvent("recreate", "DeletedPod")
}
