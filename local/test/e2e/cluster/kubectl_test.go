package cluster_test

import (
	"context"
	"os/exec"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ray-operator/ray-operator/internal/testing/kubectl"
)

// kubectlCmd builds a command of the real kubectl against the local
// cluster's kubeconfig.
func (s *suite) kubectlCmd(ctx context.Context, args ...string) (*exec.Cmd, error) {
	return kubectl.Command(ctx, s.cluster.KubeconfigPath(), args...)
}

// kubectl runs kubectl and returns what it printed on stdout; the error
// carries its stderr.
func (s *suite) kubectl(ctx context.Context, args ...string) (string, error) {
	return kubectl.Run(ctx, s.cluster.KubeconfigPath(), args...)
}

// rayPython runs a Python script with the Ray virtualenv's python in the
// ray-head container of pod (kubectl exec), as a user attaches to a cluster.
func (s *suite) rayPython(ctx context.Context, ns, pod, script string) (string, error) {
	return s.kubectl(ctx, "exec", "-n", ns, pod, "-c", "ray-head", "--", "python", "-c", script)
}

// rayPods lists the Pods of a RayCluster of one node type (head or worker).
func (s *suite) rayPods(ctx context.Context, ns, cluster, nodeType string) ([]corev1.Pod, error) {
	pods := &corev1.PodList{}
	err := s.client.List(ctx, pods, client.InNamespace(ns), client.MatchingLabels{"ray.io/cluster": cluster, "ray.io/node-type": nodeType})
	return pods.Items, err
}

// runningAndReady tells whether a pod runs with every container ready.
func runningAndReady(p *corev1.Pod) bool {
	if p.Status.Phase != corev1.PodRunning || p.DeletionTimestamp != nil {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
