package cluster_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/batchscheduler/kuberneteswas"
	scheduling "github.com/ray-operator/ray-operator/internal/batchscheduler/kuberneteswas/schedulingv1alpha2"
)

// countAliveNodes waits (in the head) until three Ray nodes are alive.
const countAliveNodes = `
import ray, time
ray.init()
deadline = time.time() + 120
while True:
    alive = sum(1 for n in ray.nodes() if n["Alive"])
    if alive >= 3 or time.time() > deadline:
        break
    time.sleep(1)
print("alive", alive)
`

// wasTimeout bounds the gang's start: three Ray Pods on the local node.
const wasTimeout = 4 * time.Minute

// TestKubernetesWASGangOnLocalNode: the gang-scheduling sample with the
// shared operator's KubernetesWAS gate. The local control plane's
// kube-scheduler places the head and both workers as one gang (the
// PodGroup's PodGroupScheduled=True, every Pod naming it), and the real Ray
// processes form one cluster of three nodes.
func TestKubernetesWASGangOnLocalNode(t *testing.T) {
	began := time.Now()
	ns := shared.namespace(t)
	rc := shared.applySample(t, ns, "ray-cluster.gang-scheduling.yaml").(*rayv1.RayCluster)
	ctx, cancel := context.WithTimeout(t.Context(), wasTimeout)
	defer cancel()
	head := shared.waitHead(ctx, t, ns, rc.Name, "")
	out := shared.retryPython(ctx, t, ns, head, countAliveNodes)
	if !strings.Contains(out, "alive 3") {
		t.Fatalf("Ray nodes alive: %s", out)
	}
	t.Logf("gang of 3 Ray nodes up after %v", time.Since(began).Round(time.Second))

	pg := &scheduling.PodGroup{}
	err := poll(ctx, func() (bool, error) {
		if err := shared.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: kuberneteswas.PodGroupName(rc.Name)}, pg); err != nil {
			return false, err
		}
		c := meta.FindStatusCondition(pg.Status.Conditions, scheduling.PodGroupScheduled)
		return c != nil && c.Status == metav1.ConditionTrue, fmt.Errorf("conditions %+v", pg.Status.Conditions)
	})
	if err != nil || pg.Spec.SchedulingPolicy.Gang == nil || pg.Spec.SchedulingPolicy.Gang.MinCount != 3 {
		t.Fatalf("PodGroup %+v: %v", pg.Spec, err)
	}
	for _, nodeType := range []string{"head", "worker"} {
		pods, err := shared.rayPods(ctx, ns, rc.Name, nodeType)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pods {
			if p.Spec.SchedulingGroup == nil || ptr.Deref(p.Spec.SchedulingGroup.PodGroupName, "") != pg.Name || p.Spec.NodeName == "" {
				t.Errorf("Pod %s: schedulingGroup %+v node %q", p.Name, p.Spec.SchedulingGroup, p.Spec.NodeName)
			}
		}
	}
}
