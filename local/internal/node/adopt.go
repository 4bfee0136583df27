package node

import (
	"context"
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/ray-operator/ray-operator/local/internal/sandbox"
)

// destroyOrphans destroys the adopted sandboxes of pods that the API no
// longer binds to this node: deleted for good while no node agent ran, or
// left by an earlier cluster whose API server is gone.
func (n *Node) destroyOrphans(ctx context.Context, host *sandbox.Host) error {
	pods, err := n.client.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("spec.nodeName", n.name).String()})
	if err != nil {
		return fmt.Errorf("listing the node's pods: %w", err)
	}
	bound := map[string]bool{}
	for _, p := range pods.Items {
		bound[string(p.UID)] = true
	}
	var errs []error
	for _, sb := range host.Sandboxes() {
		if spec := sb.Spec(); sb.WasAdopted() && !bound[spec.UID] {
			n.log.Info("Destroying the adopted sandbox of a pod that is gone", "pod", spec.Namespace+"/"+spec.Name, "uid", spec.UID)
			errs = append(errs, sb.Destroy(ctx))
		}
	}
	return errors.Join(errs...)
}
