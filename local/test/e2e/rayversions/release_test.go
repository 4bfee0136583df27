package rayversions_test

import (
	"strings"

	"k8s.io/apimachinery/pkg/util/version"
)

// Thresholds of what a Ray release can do that the cases depend on, from
// Ray's own releases (docs/dev/ray-versions.md, rows 1 and 18).
var (
	// unifiedHealthCheck: from 2.53.0 the operator's probes are httpGet
	// /api/healthz (Ray serves it from 2.53.0); before, exec wget probes.
	unifiedHealthCheck = version.MustParseGeneric("2.53.0")
	// autoscalerV2: the KubeRay autoscaler sidecar has a v2 path from
	// 2.10.0; 2.9.x always runs v1 whatever autoscalerOptions.version says.
	autoscalerV2 = version.MustParseGeneric("2.10.0")
)

// cleanupCrash names the releases whose Redis cleanup Job is a known
// failure, with the reason. It is Ray's bug, not the operator's: the Job
// runs KubeRay's script with the release's own cleanup_redis_storage, and a
// real cluster would fail the same way (docs/dev/ray-versions.md, "Ray
// 2.41.0's Redis cleanup Job crashes").
var cleanupCrash = map[string]string{
	"2.41.0": "Ray 2.41.0's RedisDelKeyPrefixSync (behind cleanup_redis_storage) destroys its io_context " +
		"before its Redis client, whose destructor then deregisters the socket from the freed reactor " +
		"(a heap use-after-free, shown by valgrind on the host); after deleting every key the process " +
		"aborts in glibc (\"malloc(): mismatching next->prev_size\"), so the Job fails and the operator " +
		"reports RedisCleanupJobFailed although Redis is empty",
}

// knownCleanupCrash returns why the release's Redis cleanup Job is known
// to fail, or "".
func (r release) knownCleanupCrash() string { return cleanupCrash[r.String()] }

// release is one Ray release of the matrix.
type release struct {
	v *version.Version
}

func (r release) String() string { return r.v.String() }

// httpProbes tells whether the operator gives this release's Ray
// containers httpGet probes.
func (r release) httpProbes() bool { return r.v.AtLeast(unifiedHealthCheck) }

// autoscalerVersion is the autoscalerOptions.version the shared cluster
// asks for: v2 where the release has it.
func (r release) autoscalerVersion() string {
	if r.v.AtLeast(autoscalerV2) {
		return "v2"
	}
	return "v1"
}

// sharedCluster is the RayCluster the RayJobs, the autoscaler and the GCS
// fault-tolerance cases of a release share. Its head offers no CPU; the
// group "fixed" has one worker with one CPU (the RayJobs' tasks and the
// detached actor run there); the group "scaled" starts empty and offers
// only the custom resource "scaled", so only the autoscaler can make room
// for a task that needs it. GCS state goes to the Redis of redisManifest.
// Requests are small: every release's Pods fit the node at once.
const sharedCluster = `apiVersion: ray.io/v1
kind: RayCluster
metadata:
  name: matrix
spec:
  rayVersion: "{{version}}"
  enableInTreeAutoscaling: true
  autoscalerOptions:
    version: {{autoscaler}}
    resources:
      requests: {cpu: 100m, memory: 256Mi}
      limits: {cpu: 500m, memory: 1Gi}
  gcsFaultToleranceOptions:
    redisAddress: redis:6379
  headGroupSpec:
    rayStartParams:
      num-cpus: "0"
    template:
      spec:
        terminationGracePeriodSeconds: 5
        containers:
        - name: ray-head
          image: rayproject/ray:{{version}}
          resources:
            requests: {cpu: 300m, memory: 1Gi}
            limits: {cpu: "1", memory: 2Gi}
  workerGroupSpecs:
  - groupName: fixed
    replicas: 1
    minReplicas: 1
    maxReplicas: 1
    rayStartParams: {}
    template:
      spec:
        terminationGracePeriodSeconds: 5
        containers:
        - name: ray-worker
          image: rayproject/ray:{{version}}
          resources:
            requests: {cpu: 300m, memory: 1Gi}
            limits: {cpu: "1", memory: 1Gi}
  - groupName: scaled
    replicas: 0
    minReplicas: 0
    maxReplicas: 1
    rayStartParams:
      num-cpus: "0"
      resources: '"{\"scaled\": 1}"'
    template:
      spec:
        terminationGracePeriodSeconds: 5
        containers:
        - name: ray-worker
          image: rayproject/ray:{{version}}
          resources:
            requests: {cpu: 200m, memory: 1Gi}
            limits: {cpu: "1", memory: 1Gi}
`

// redisManifest is the Redis of the shared cluster's GCS state, with no
// password (the node runs Debian's redis-server for a Redis image).
const redisManifest = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: redis
  labels: {app: redis}
spec:
  replicas: 1
  selector:
    matchLabels: {app: redis}
  template:
    metadata:
      labels: {app: redis}
    spec:
      containers:
      - name: redis
        image: redis:7.4
        command: [redis-server, --port, "6379", --bind, 0.0.0.0, --protected-mode, "no", --save, "", --appendonly, "no"]
        ports:
        - {containerPort: 6379, name: redis}
        resources:
          requests: {cpu: 50m, memory: 64Mi}
---
apiVersion: v1
kind: Service
metadata:
  name: redis
spec:
  selector: {app: redis}
  ports:
  - {name: redis, port: 6379, targetPort: redis}
`

// manifest fills a template with the release.
func (r release) manifest(template string) []byte {
	return []byte(strings.NewReplacer("{{version}}", r.String(), "{{autoscaler}}", r.autoscalerVersion()).Replace(template))
}

// rayJob is a RayJob of the given submission mode on the shared cluster
// (clusterSelector). Its entrypoint runs tasks on the worker and prints the
// Ray release of the driver; its metadata makes the K8sJobMode submitter
// pass --metadata-json (Ray 2.6.0 and later).
const rayJob = `apiVersion: ray.io/v1
kind: RayJob
metadata:
  name: {{name}}
spec:
  submissionMode: {{mode}}
  clusterSelector:
    ray.io/cluster: matrix
  metadata:
    matrix: "{{version}}"
  entrypoint: >-
    python -c "import ray; ray.init(); print('driver on Ray', ray.__version__, 'sum', sum(ray.get([ray.remote(lambda x: x * x).remote(i) for i in range(4)])))"
`

// rayJobManifest is rayJob named name in mode.
func (r release) rayJobManifest(name, mode string) []byte {
	return []byte(strings.NewReplacer("{{version}}", r.String(), "{{name}}", name, "{{mode}}", mode).Replace(rayJob))
}

// driverOutput is what the RayJobs' entrypoint prints on release r.
func (r release) driverOutput() string { return "driver on Ray " + r.String() + " sum 14" }

// tokenAuth: the operator refuses authOptions.mode token below 2.52.0, as
// KubeRay does (Ray has token auth from 2.52.0).
var tokenAuth = version.MustParseGeneric("2.52.0")

// tokenAuthCluster is a suspended head-only RayCluster with token auth:
// the operator validates it and, when valid, suspends it without a Pod.
const tokenAuthCluster = `apiVersion: ray.io/v1
kind: RayCluster
metadata:
  name: token
spec:
  rayVersion: "{{version}}"
  suspend: true
  authOptions:
    mode: token
  headGroupSpec:
    rayStartParams: {}
    template:
      spec:
        containers:
        - name: ray-head
          image: rayproject/ray:{{version}}
`
