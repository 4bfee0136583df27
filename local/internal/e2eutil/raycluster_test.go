package e2eutil

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/testing/testenv"
)

// The manifests the cluster package's tests wrote by hand before they
// used RayClusterBuilder (local/test/e2e/cluster: headdeath_test.go,
// node_lost_test.go, node_down_test.go, raylet_crash_test.go): the
// builder, called as those tests call it, must give the same objects.
const (
	headDeathYAML = `apiVersion: ray.io/v1
kind: RayCluster
metadata:
  name: headdeath
spec:
  rayVersion: "2.60.0"
  headGroupSpec:
    rayStartParams:
      num-cpus: "0"
    template:
      spec:
        terminationGracePeriodSeconds: 5
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
          containers:
            - name: ray-worker
              image: rayproject/ray:2.60.0
              resources:
                requests: {cpu: 400m, memory: 1Gi}
                limits: {cpu: "1", memory: 1Gi}
`
	nodeLostYAML = `apiVersion: ray.io/v1
kind: RayCluster
metadata:
  name: node-lost
spec:
  rayVersion: "2.52.0"
  headGroupSpec:
    rayStartParams:
      num-cpus: "1"
    template:
      spec:
        tolerations:
          - {key: node.kubernetes.io/unreachable, operator: Exists, effect: NoExecute, tolerationSeconds: 5}
          - {key: node.kubernetes.io/not-ready, operator: Exists, effect: NoExecute, tolerationSeconds: 5}
        containers:
          - name: ray-head
            image: rayproject/ray:2.52.0
            resources:
              requests: {cpu: 500m, memory: 2Gi}
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
          tolerations:
            - {key: node.kubernetes.io/unreachable, operator: Exists, effect: NoExecute, tolerationSeconds: 5}
            - {key: node.kubernetes.io/not-ready, operator: Exists, effect: NoExecute, tolerationSeconds: 5}
          containers:
            - name: ray-worker
              image: rayproject/ray:2.52.0
              resources:
                requests: {cpu: 500m, memory: 1Gi}
                limits: {cpu: "1", memory: 1Gi}
`
	nodeDownYAML = `apiVersion: ray.io/v1
kind: RayJob
metadata:
  name: node-down
spec:
  submissionMode: HTTPMode
  entrypoint: >-
    python -c "import time, ray; ray.init();
    step = ray.remote(resources={'worker_slot': 1})(lambda i: time.sleep(10) or i * i);
    [print('step', i, ray.get(step.remote(i)), flush=True) for i in range(7)]"
  rayClusterSpec:
    rayVersion: "2.52.0"
    headGroupSpec:
      rayStartParams:
        num-cpus: "1"
      template:
        spec:
          containers:
            - name: ray-head
              image: rayproject/ray:2.52.0
              resources:
                requests: {cpu: 500m, memory: 2Gi}
                limits: {cpu: "1", memory: 2Gi}
    workerGroupSpecs:
      - groupName: workers
        replicas: 1
        minReplicas: 1
        maxReplicas: 1
        rayStartParams:
          num-cpus: "1"
          resources: '"{\"worker_slot\": 1}"'
        template:
          spec:
            containers:
              - name: ray-worker
                image: rayproject/ray:2.52.0
                resources:
                  requests: {cpu: 500m, memory: 1Gi}
                  limits: {cpu: "1", memory: 1Gi}
`
	rayletCrashYAML = `apiVersion: ray.io/v1
kind: RayJob
metadata:
  name: raylet-crash
spec:
  submissionMode: HTTPMode
  entrypoint: >-
    python -c "import time, ray; ray.init();
    step = ray.remote(resources={'worker_slot': 1}, max_retries=3)(lambda i: time.sleep(5) or i * i);
    [print('step', i, ray.get(step.remote(i)), flush=True) for i in range(5)]"
  rayClusterSpec:
    rayVersion: "2.52.0"
    headGroupSpec:
      rayStartParams:
        num-cpus: "1"
      template:
        spec:
          containers:
            - name: ray-head
              image: rayproject/ray:2.52.0
              resources:
                requests: {cpu: 500m, memory: 2Gi}
                limits: {cpu: "1", memory: 2Gi}
    workerGroupSpecs:
      - groupName: workers
        replicas: 1
        minReplicas: 1
        maxReplicas: 1
        rayStartParams:
          num-cpus: "1"
          resources: '"{\"worker_slot\": 1}"'
        template:
          spec:
            containers:
              - name: ray-worker
                image: rayproject/ray:2.52.0
                resources:
                  requests: {cpu: 500m, memory: 1Gi}
                  limits: {cpu: "1", memory: 1Gi}
`
)

// The entrypoints of the two RayJobs, as the tests write them.
const (
	nodeDownEntrypoint    = `python -c "import time, ray; ray.init(); step = ray.remote(resources={'worker_slot': 1})(lambda i: time.sleep(10) or i * i); [print('step', i, ray.get(step.remote(i)), flush=True) for i in range(7)]"`
	rayletCrashEntrypoint = `python -c "import time, ray; ray.init(); step = ray.remote(resources={'worker_slot': 1}, max_retries=3)(lambda i: time.sleep(5) or i * i); [print('step', i, ray.get(step.remote(i)), flush=True) for i in range(5)]"`
)

// stepsCluster is the cluster of the node-down and raylet-crash RayJobs.
func stepsCluster() *rayv1.RayClusterSpec {
	return NewRayCluster("", "2.52.0").
		Head("1", Resources("500m", "2Gi"), Resources("1", "2Gi")).
		Worker("workers", 1, "1", Resources("500m", "1Gi"), Resources("1", "1Gi")).
		WorkerResources(`"{\"worker_slot\": 1}"`).
		Spec()
}

func TestRayClusterBuilderMatchesManifests(t *testing.T) {
	cases := map[string]struct {
		yaml string
		got  client.Object
	}{
		"head death": {headDeathYAML, NewRayCluster("headdeath", "2.60.0").
			Head("0", Resources("400m", "1Gi"), Resources("1", "2Gi")).
			Worker("workers", 1, "1", Resources("400m", "1Gi"), Resources("1", "1Gi")).
			GracePeriod(5).
			Obj()},
		"node lost": {nodeLostYAML, NewRayCluster("node-lost", "2.52.0").
			Head("1", Resources("500m", "2Gi"), Resources("1", "2Gi")).
			Worker("workers", 1, "1", Resources("500m", "1Gi"), Resources("1", "1Gi")).
			TolerateNodeLoss(5).
			Obj()},
		"node down":    {nodeDownYAML, HTTPModeRayJob("node-down", nodeDownEntrypoint, stepsCluster())},
		"raylet crash": {rayletCrashYAML, HTTPModeRayJob("raylet-crash", rayletCrashEntrypoint, stepsCluster())},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			want := decodeTyped(t, tc.yaml, tc.got)
			if diff := cmp.Diff(want, tc.got, cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })); diff != "" {
				t.Errorf("built object differs from the manifest (-want +got):\n%s", diff)
			}
		})
	}
}

// decodeTyped decodes the one object of manifest into a new object of
// like's type.
func decodeTyped(t *testing.T, manifest string, like client.Object) client.Object {
	t.Helper()
	objs, err := testenv.DecodeObjects([]byte(manifest))
	if err != nil || len(objs) != 1 {
		t.Fatalf("decoding: %d objects, %v", len(objs), err)
	}
	out := like.DeepCopyObject().(client.Object)
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(objs[0].Object, out); err != nil {
		t.Fatal(err)
	}
	return out
}
