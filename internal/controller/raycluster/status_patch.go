package raycluster

import (
	"encoding/json"
	"fmt"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// wholeStatusPatch is a JSON merge patch that carries the whole new status,
// as KubeRay's status update writes it, plus a null for every field the new
// status drops. A patch of only the changed fields would leave out what is
// equal in both statuses, such as "desiredGPU": "0", which a new cluster's
// stored status then never gets (KubeRay's does; `kubectl get rayclusters`
// shows it in the GPUS column).
type wholeStatusPatch struct {
	original *rayv1.RayClusterStatus
}

func (p wholeStatusPatch) Type() types.PatchType { return types.MergePatchType }

// Data is the patch for obj, a RayCluster holding the new status.
func (p wholeStatusPatch) Data(obj client.Object) ([]byte, error) {
	cluster, ok := obj.(*rayv1.RayCluster)
	if !ok {
		return nil, fmt.Errorf("status patch of a %T, want a RayCluster", obj)
	}
	return statusPatchData(p.original, &cluster.Status)
}

// statusPatchData is {"status": <updated, whole>} with nulls where original
// had fields that updated has not.
func statusPatchData(original, updated *rayv1.RayClusterStatus) ([]byte, error) {
	before, err := json.Marshal(original)
	if err != nil {
		return nil, err
	}
	after, err := json.Marshal(updated)
	if err != nil {
		return nil, err
	}
	diff, err := jsonpatch.CreateMergePatch(before, after)
	if err != nil {
		return nil, err
	}
	var whole, changes map[string]any
	if err := json.Unmarshal(after, &whole); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(diff, &changes); err != nil {
		return nil, err
	}
	addRemovals(whole, changes)
	return json.Marshal(map[string]any{"status": whole})
}

// addRemovals copies the nulls of a merge patch into whole, at any depth.
func addRemovals(whole, changes map[string]any) {
	for key, change := range changes {
		if change == nil {
			whole[key] = nil
			continue
		}
		inner, isMap := change.(map[string]any)
		if target, ok := whole[key].(map[string]any); isMap && ok {
			addRemovals(target, inner)
		}
	}
}
