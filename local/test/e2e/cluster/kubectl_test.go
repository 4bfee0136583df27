package cluster_test

import (
	"context"
	"os/exec"

	corev1 "k8s.io/api/core/v1"

	"github.com/ray-operator/ray-operator/internal/testing/kubectl"
	"github.com/ray-operator/ray-operator/local/internal/e2eutil"
)

// kubectlCmd builds a command of the real kubectl against the local
// cluster's kubeconfig.
func (s *suite) kubectlCmd(ctx context.Context, args ...string) (*exec.Cmd, error) {
	return kubectl.Command(ctx, s.Cluster.KubeconfigPath(), args...)
}

// kubectl runs kubectl and returns what it printed on stdout; the error
// carries its stderr.
func (s *suite) kubectl(ctx context.Context, args ...string) (string, error) {
	return kubectl.Run(ctx, s.Cluster.KubeconfigPath(), args...)
}

// rayPython runs a Python script with the Ray virtualenv's python in the
// ray-head container of pod (kubectl exec), as a user attaches to a cluster.
func (s *suite) rayPython(ctx context.Context, ns, pod, script string) (string, error) {
	return s.RayPython(ctx, ns, pod, "ray-head", script)
}

// rayPods lists the Pods of a RayCluster of one node type (head or worker).
func (s *suite) rayPods(ctx context.Context, ns, cluster, nodeType string) ([]corev1.Pod, error) {
	return s.RayPods(ctx, ns, cluster, nodeType)
}

// runningAndReady tells whether a pod runs with every container ready.
func runningAndReady(p *corev1.Pod) bool { return e2eutil.RunningAndReady(p) }
