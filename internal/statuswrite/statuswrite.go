// Package statuswrite writes the status of a reconciled object, the one way
// every controller does: a JSON merge patch of the status subresource that
// carries the whole new status, as an update would, plus a null for every
// field the new status drops.
//
// A patch of only the changed fields would leave out what is equal in both
// statuses, such as a RayCluster's "desiredGPU": "0", which a new object's
// stored status then never gets (KubeRay's update stores it; `kubectl get
// rayclusters` shows it). A patch of the new status alone would keep a
// field the new status dropped.
package statuswrite

import (
	"context"
	"encoding/json"
	"fmt"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Write writes updated as the status of obj with one merge patch: the whole
// of updated, and a null for each field (at any depth) that original has
// and updated has not. original and updated are status structs, encoded
// with their JSON tags.
//
// obj names the object and receives the API server's answer. When obj
// carries a resourceVersion the patch does too, so that the write fails
// with a conflict when the object changed since it was read, as an update
// of the status does; an obj with none (a name-only copy) writes whatever
// the object became meanwhile.
func Write(ctx context.Context, c client.Client, obj client.Object, original, updated any) error {
	p := wholeStatus{original: original, updated: updated, resourceVersion: obj.GetResourceVersion()}
	return c.Status().Patch(ctx, obj, p)
}

// wholeStatus is the patch Write sends.
type wholeStatus struct {
	original, updated any
	resourceVersion   string
}

func (p wholeStatus) Type() types.PatchType { return types.MergePatchType }

// Data is the patch: the status, and the resourceVersion when there is one.
func (p wholeStatus) Data(client.Object) ([]byte, error) {
	status, err := Data(p.original, p.updated)
	if err != nil {
		return nil, err
	}
	patch := map[string]any{"status": status}
	if p.resourceVersion != "" {
		patch["metadata"] = map[string]any{"resourceVersion": p.resourceVersion}
	}
	return json.Marshal(patch)
}

// Data is the status of the patch as a JSON object: updated whole, with
// nulls where original had fields that updated has not.
func Data(original, updated any) (map[string]any, error) {
	before, err := json.Marshal(original)
	if err != nil {
		return nil, fmt.Errorf("encoding the old status: %w", err)
	}
	after, err := json.Marshal(updated)
	if err != nil {
		return nil, fmt.Errorf("encoding the new status: %w", err)
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
	return whole, nil
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
