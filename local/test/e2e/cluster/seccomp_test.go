package cluster_test

import (
	"context"
	"strings"
	"testing"
	"time"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// seccompCluster is a head offering no CPU and one worker offering one,
// both pods under seccompProfile RuntimeDefault, as Pod Security's
// "restricted" level asks.
const seccompCluster = `
apiVersion: ray.io/v1
kind: RayCluster
metadata:
  name: seccomp
spec:
  rayVersion: "2.60.0"
  headGroupSpec:
    rayStartParams:
      num-cpus: "0"
    template:
      spec:
        terminationGracePeriodSeconds: 5
        securityContext:
          seccompProfile: {type: RuntimeDefault}
        containers:
          - name: ray-head
            image: rayproject/ray:2.60.0
            resources:
              requests: {cpu: 400m, memory: 1Gi}
              limits: {cpu: "1", memory: 2Gi}
  workerGroupSpecs:
    - groupName: workers
      replicas: 1
      minReplicas: 1
      maxReplicas: 1
      rayStartParams:
        num-cpus: "1"
      template:
        spec:
          terminationGracePeriodSeconds: 5
          securityContext:
            seccompProfile: {type: RuntimeDefault}
          containers:
            - name: ray-worker
              image: rayproject/ray:2.60.0
              resources:
                requests: {cpu: 400m, memory: 1Gi}
                limits: {cpu: "1", memory: 1Gi}
`

// seccompDriver prints the driver's seccomp mode, the mode a task on the
// worker runs under, and what the tasks computed.
const seccompDriver = `
import ray
def mode():
    return next(l.split()[1] for l in open("/proc/self/status") if l.startswith("Seccomp:"))
ray.init()
print("alive", sum(1 for n in ray.nodes() if n["Alive"]))
print("driver seccomp", mode())
print("task seccomp", ray.get(ray.remote(num_cpus=1)(mode).remote(), timeout=60))
print("sum of squares", sum(ray.get([ray.remote(num_cpus=1)(lambda x: x * x).remote(i) for i in range(5)], timeout=60)))
`

// TestRuntimeDefaultSeccomp: Ray starts, the worker joins and tasks run
// with both pods under RuntimeDefault, the container runtimes' default
// seccomp allow list (filter mode 2 in the driver on the head and in a task
// on the worker).
func TestRuntimeDefaultSeccomp(t *testing.T) {
	t.Parallel() // mostly waiting: see the package comment (main_test.go)
	ns := shared.namespace(t)
	rc := shared.applyManifest(t, ns, "seccompCluster", []byte(seccompCluster)).(*rayv1.RayCluster)
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()
	head := shared.waitHead(ctx, t, ns, rc.Name, "")
	var out string
	err := poll(ctx, func() (bool, error) {
		var err error
		out, err = shared.rayPython(ctx, ns, head, seccompDriver)
		return err == nil && strings.Contains(out, "alive 2"), nil
	})
	if err != nil {
		shared.dump(context.WithoutCancel(ctx), t, ns)
		t.Fatalf("Ray under RuntimeDefault: %v\n%s", err, out)
	}
	for _, want := range []string{"driver seccomp 2", "task seccomp 2", "sum of squares 30"} {
		if !strings.Contains(out, want) {
			t.Errorf("the driver did not print %q:\n%s", want, out)
		}
	}
}
