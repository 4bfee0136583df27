package walkthrough_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// olderRay is the oldest Ray release this package runs: 2.41.0, which
// hack/prefetch.sh installs for the node suite as well (cached after the
// first run on a machine).
const olderRay = "2.41.0"

// olderRayCluster is a RayCluster of olderRay with a head only: it is
// ready once the head's probes of that release (exec, wget) pass.
const olderRayCluster = `apiVersion: ray.io/v1
kind: RayCluster
metadata:
  name: older-ray
spec:
  rayVersion: "` + olderRay + `"
  headGroupSpec:
    rayStartParams: {}
    template:
      spec:
        containers:
        - name: ray-head
          image: rayproject/ray:` + olderRay + `
          resources:
            limits: {cpu: "1", memory: 2Gi}
            requests: {cpu: 200m, memory: 1Gi}
`

// requireOlderRayHead applies a RayCluster of olderRay and waits until it
// is ready: its image tag installs and runs that release (the head says
// so), whose `ray start --head` passes the operator's probes for it.
func requireOlderRayHead(t *testing.T, kubectl func(args ...string) string) {
	t.Helper()
	manifest := filepath.Join(t.TempDir(), "older-ray.yaml")
	if err := os.WriteFile(manifest, []byte(olderRayCluster), 0o600); err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	kubectl("apply", "-f", manifest)
	kubectl("wait", "--for=jsonpath={.status.state}=ready", "--timeout="+jobTimeout.String(), "raycluster/older-ray")
	t.Logf("a RayCluster of Ray %s was ready %v after kubectl apply", olderRay, time.Since(began).Round(time.Second))
	head := kubectl("get", "pods", "-l", "ray.io/cluster=older-ray,ray.io/node-type=head", "-o", "name")
	if got := kubectl("exec", head, "--", "python", "-c", "import ray; print(ray.__version__)"); got != olderRay {
		t.Fatalf("the head runs Ray %q, want %s", got, olderRay)
	}
	if pulled := kubectl("get", "events", "--field-selector=reason=Pulled,involvedObject.name="+strings.TrimPrefix(head, "pod/"), "-o", "jsonpath={.items[*].message}"); !strings.Contains(pulled, "(local: Ray "+olderRay+" virtualenv ") {
		t.Fatalf("the head's Pulled events do not name Ray %s: %s", olderRay, pulled)
	}
}
