package cluster_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/testing/testenv"
	"github.com/ray-operator/ray-operator/local/internal/e2eutil"
)

// haServeConfig deploys the hello application with its replica needing a
// tenth of a CPU, which only the worker offers: the replica, and so a
// Serve proxy, runs on the worker.
const haServeConfig = `applications:
  - name: hello
    import_path: e2e_hello:app
    route_prefix: /hello
    deployments:
      - name: Hello
        num_replicas: 1
        ray_actor_options:
          num_cpus: 0.1
`

// haRayService is the hello RayService with GCS fault tolerance on backend
// (the external-Redis sample's Redis, or RocksDB on a claim the operator
// creates) and one worker, where the replica runs. Head and worker mount
// the hello module; the worker says v1.
func haRayService(ns string, backend rayv1.GcsFaultToleranceBackend) *rayv1.RayService {
	worker := e2eutil.HelloHeadPod("v1")
	c := &worker.Containers[0]
	c.Name = "ray-worker"
	c.Ports = []corev1.ContainerPort{{Name: rayv1.ServingPortName, ContainerPort: e2eutil.HelloServePort}}
	c.Resources.Requests[corev1.ResourceCPU] = resource.MustParse("400m")
	rs := e2eutil.HelloRayService(ns, "v1")
	rs.Spec.ServeConfigV2 = haServeConfig
	spec := &rs.Spec.RayClusterSpec
	spec.HeadGroupSpec.RayStartParams = map[string]string{"num-cpus": "0"}
	spec.GcsFaultToleranceOptions = &rayv1.GcsFaultToleranceOptions{
		RedisAddress: "redis:6379",
		RedisPassword: &rayv1.RedisCredential{ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: "redis-password"}, Key: "password",
		}}},
	}
	if backend == rayv1.GcsFTBackendRocksDB {
		spec.GcsFaultToleranceOptions = &rayv1.GcsFaultToleranceOptions{Backend: rayv1.GcsFTBackendRocksDB}
	}
	spec.WorkerGroupSpecs = []rayv1.WorkerGroupSpec{{
		GroupName:      "workers",
		Replicas:       ptr.To[int32](1),
		MinReplicas:    ptr.To[int32](1),
		MaxReplicas:    ptr.To[int32](1),
		RayStartParams: map[string]string{"num-cpus": "1"},
		Template:       corev1.PodTemplateSpec{Spec: worker},
	}}
	return rs
}

// TestRayServiceHeadCrashGCSFaultTolerance (issue #22, scenario 3): a
// RayService with GCS fault tolerance (Redis; and RocksDB on the head's
// claim, which the restarted container mounts again) serves from a replica on its
// worker while the head's gcs_server is SIGKILLed and the head container
// restarts. The worker keeps running (the operator gives it a 600 s GCS
// reconnect timeout) and so do its proxy and replica; a request loop
// through the serve Service counts what fails meanwhile. The RayService
// becomes Ready again on the same RayCluster, and requests succeed after
// the recovery.
//
// With the head in the serve Service (the default: its proxy answers, so
// the operator labels it ray.io/serve=true), the requests that kube-proxy
// sends to the head between the kill and the removal of the head's endpoint
// fail (connection refused, or no answer until the client's timeout while
// the head container winds down; a request in flight there ends with EOF).
// The node marks the Pod unready once the container has exited (measured
// 0.6 s after the kill; over 5 s once on a loaded machine), and kube-proxy
// follows the EndpointSlice within a second: the test watches the slice and
// allows failures only up to failWindow after the head's endpoint left it.
// With excludeHeadPodFromServeSvc the head is never an endpoint and no
// request may fail after the kill.
func TestRayServiceHeadCrashGCSFaultTolerance(t *testing.T) {
	t.Parallel() // mostly waiting: see the package comment (main_test.go)
	for _, tc := range []headCrashCase{
		{name: "head in the serve Service", backend: rayv1.GcsFTBackendRedis, endpoints: 2, failWindow: 2 * time.Second},
		{name: "excludeHeadPodFromServeSvc", backend: rayv1.GcsFTBackendRedis, excludeHead: true, endpoints: 1},
		{name: "RocksDB, excludeHeadPodFromServeSvc", backend: rayv1.GcsFTBackendRocksDB, excludeHead: true, endpoints: 1},
	} {
		t.Run(tc.name, func(t *testing.T) { testServeThroughHeadCrash(t, tc) })
	}
}

// headCrashCase is one RayService of TestRayServiceHeadCrashGCSFaultTolerance.
type headCrashCase struct {
	name        string
	backend     rayv1.GcsFaultToleranceBackend
	excludeHead bool
	endpoints   int32
	// failWindow bounds when a request may fail: up to this long after the
	// head's endpoint left the serve Service (with excludeHead: after the
	// kill).
	failWindow time.Duration
}

func testServeThroughHeadCrash(t *testing.T, tc headCrashCase) {
	excludeHead, endpoints, failWindow := tc.excludeHead, tc.endpoints, tc.failWindow
	began := time.Now()
	ns := shared.namespace(t)
	if tc.backend == rayv1.GcsFTBackendRedis {
		shared.applyRedis(t, ns)
	}
	if err := shared.Client.Create(t.Context(), e2eutil.HelloApp(ns)); err != nil {
		t.Fatal(err)
	}
	svc := haRayService(ns, tc.backend)
	svc.Spec.ExcludeHeadPodFromServeSvc = excludeHead
	if err := shared.Client.Create(t.Context(), svc); err != nil {
		t.Fatal(err)
	}
	if tc.backend == rayv1.GcsFTBackendRedis {
		t.Cleanup(func() { shared.deleteBeforeRedis(t, svc) })
	}
	rs := shared.waitRayService(t, ns, rayServiceReadyTimeout, "serving on one cluster", servingFrom(endpoints))
	cluster := rs.Status.ActiveServiceStatus.RayClusterName
	ctx, cancel := context.WithTimeout(t.Context(), 3*headDeathTimeout)
	defer cancel()
	head := shared.waitHead(ctx, t, ns, cluster, "")
	serve := shared.serveService(t, ns, cluster)
	url := fmt.Sprintf("http://%s%s", net.JoinHostPort(serve.Spec.ClusterIP, strconv.Itoa(e2eutil.HelloServePort)), e2eutil.HelloRoute)
	shared.waitAnswer(t, url, "v1")
	before := shared.clusterPods(ctx, t, ns, cluster)
	t.Logf("RayService ready after %v, %d serve endpoints", time.Since(began).Round(time.Second), rs.Status.NumServeEndpoints)

	loop := e2eutil.StartRequestLoop(url)
	loopStarted := time.Now()
	finished := false
	defer func() {
		if !finished {
			loop.Finish()
		}
	}()
	waitFor(t, "the loop's first answers", func() (bool, error) { return loop.Answered("v1") >= 20, nil })
	replicas := outputLine(shared.retryPython(ctx, t, ns, head, aliveReplicas), "replicas ")
	var headLeft <-chan endpointLeft
	if !excludeHead {
		headLeft = shared.watchEndpointLeaves(ctx, t, ns, serve.Name, head)
	}
	history := shared.recordEndpoints(ctx, t, ns, serve.Name)
	killedAt := killGCSServer(t, before[head])

	recovered := shared.waitHAReady(ctx, t, ns, cluster, before, endpoints)
	t.Logf("head restarted, RayService Ready on %s with %d serve endpoints again %v after the kill", cluster, endpoints, recovered.Sub(killedAt).Round(time.Second))
	failUntil := killedAt.Add(failWindow)
	if headLeft != nil {
		failUntil = headLeftAt(ctx, t, headLeft, killedAt).Add(failWindow)
	}
	answered := loop.Answered("v1")
	waitFor(t, "answers after the recovery", func() (bool, error) { return loop.Answered("v1") >= answered+100, nil })
	replies := loop.Finish()
	finished = true
	if !checkHeadCrashReplies(t, replies, loopStarted, killedAt, failUntil) {
		t.Logf("the serve Service's endpoints (times after the kill):\n%s", history.since(killedAt))
	}
	// A GCS that came back without its tables would know no actor of
	// before (and would turn the old worker away within a minute).
	if after := outputLine(shared.retryPython(ctx, t, ns, head, aliveReplicas), "replicas "); after != replicas || !strings.Contains(after, "'") {
		t.Errorf("Serve's replica actors across the head's restart: before %q, after %q", replicas, after)
	}
	shared.checkOnlyCluster(t, ns, cluster)
	t.Logf("done in %v", time.Since(began).Round(time.Second))
}

// aliveReplicas prints the IDs of the live Serve replica actors, as the
// cluster's GCS knows them.
const aliveReplicas = `
import ray
from ray.util.state import list_actors
ray.init()
print("replicas", sorted(a.actor_id for a in list_actors(filters=[("state", "=", "ALIVE")]) if a.class_name.startswith("ServeReplica:")))
`

// outputLine is the first line of out that starts with prefix, or "".
func outputLine(out, prefix string) string {
	for line := range strings.Lines(out) {
		if strings.HasPrefix(line, prefix) {
			return strings.TrimSpace(line)
		}
	}
	return ""
}

// servingFrom is e2eutil.ServingOneCluster with endpoints serve endpoints.
func servingFrom(endpoints int32) func(*rayv1.RayService) error {
	return func(rs *rayv1.RayService) error {
		if err := e2eutil.ServingOneCluster(rs); err != nil {
			return err
		}
		if rs.Status.NumServeEndpoints != endpoints {
			return fmt.Errorf("%d serve endpoints, want %d", rs.Status.NumServeEndpoints, endpoints)
		}
		return nil
	}
}

// applyRedis creates the external-Redis sample's Redis (its Secret,
// Deployment and Service: every object but the RayCluster) in ns.
func (s *suite) applyRedis(t *testing.T, ns string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(s.Root, "config", "samples", "ray-cluster.external-redis.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	objs, err := testenv.DecodeObjects(data)
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range objs {
		if u.GetKind() == "RayCluster" {
			continue
		}
		u.SetNamespace(ns)
		if err := s.Client.Create(t.Context(), u); err != nil {
			t.Fatalf("creating %s %s: %v", u.GetKind(), u.GetName(), err)
		}
	}
}

// deleteBeforeRedis deletes the RayService and waits until its RayClusters
// are gone, before the namespace (and Redis with it) goes: the clusters'
// Redis cleanup Jobs need Redis to finish.
func (s *suite) deleteBeforeRedis(t *testing.T, rs *rayv1.RayService) {
	ctx, cancel := context.WithTimeout(context.Background(), gcsFTTimeout)
	defer cancel()
	if err := s.Client.Delete(ctx, rs); err != nil {
		t.Errorf("deleting RayService %s: %v", rs.Name, err)
		return
	}
	err := poll(ctx, func() (bool, error) {
		list := &rayv1.RayClusterList{}
		if err := s.Client.List(ctx, list, client.InNamespace(rs.Namespace)); err != nil {
			return false, err
		}
		return len(list.Items) == 0, fmt.Errorf("%d RayClusters left", len(list.Items))
	})
	if err != nil {
		t.Errorf("the RayClusters of RayService %s are not gone: %v", rs.Name, err)
	}
}

// waitHAReady waits until the head Pod (the same Pod) has restarted once
// and is ready, the worker Pod has kept running (no restart), and the
// RayService is Ready again on the same cluster with its application
// running and endpoints Pods in the serve Service (with the head: its
// proxy answers again); it returns when that was first seen.
func (s *suite) waitHAReady(ctx context.Context, t *testing.T, ns, cluster string, before map[string]*corev1.Pod, endpoints int32) time.Time {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, headDeathTimeout)
	defer cancel()
	err := poll(ctx, func() (bool, error) {
		now := s.clusterPods(ctx, t, ns, cluster)
		for name, old := range before {
			p := now[name]
			want := restarts(old)
			if p != nil && p.Labels[rayv1.LabelNodeType] == string(rayv1.HeadNode) {
				want++
			}
			if p == nil || p.UID != old.UID || restarts(p) != want || !runningAndReady(p) {
				return false, fmt.Errorf("Pod %s: want the same Pod with %d restarts, running and ready; Pods now %v", name, want, podNames(now))
			}
		}
		rs := &rayv1.RayService{}
		if err := s.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: e2eutil.HelloName}, rs); err != nil {
			return false, err
		}
		if err := servingFrom(endpoints)(rs); err != nil {
			return false, err
		}
		app := rs.Status.ActiveServiceStatus.Applications[e2eutil.HelloName]
		if rs.Status.ActiveServiceStatus.RayClusterName != cluster || app.Status != rayv1.ApplicationStatusRunning {
			return false, fmt.Errorf("active cluster %q (want %q), application %+v", rs.Status.ActiveServiceStatus.RayClusterName, cluster, app)
		}
		return clusterRecovered(ctx, s.Client, ns, cluster, int32(len(before)-1))
	})
	if err != nil {
		t.Fatalf("RayService %s did not recover: %v", e2eutil.HelloName, err)
	}
	return time.Now()
}

// headLeftAt is when the head's endpoint left the serve Service, which has
// happened once the head restarted (its Pod was unready meanwhile): the
// watch reports it, at the latest, within a few seconds of now.
func headLeftAt(ctx context.Context, t *testing.T, left <-chan endpointLeft, killedAt time.Time) time.Time {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	select {
	case l := <-left:
		if l.err != nil {
			t.Fatal(l.err)
		}
		t.Logf("the head's endpoint left the serve Service %v after the kill", l.at.Sub(killedAt).Round(time.Millisecond))
		return l.at
	case <-ctx.Done():
		t.Fatal("the head restarted, but its endpoint was not seen leaving the serve Service")
		return time.Time{}
	}
}

// checkHeadCrashReplies logs the loop's figures around the head's crash and
// fails t when a request failed that started after failUntil or more than
// the request timeout before the kill (before that, it was not in flight).
// checkHeadCrashReplies fails t for a request that failed outside the
// window from the kill to failUntil, and reports whether none did.
func checkHeadCrashReplies(t *testing.T, replies []e2eutil.Reply, start, killedAt, failUntil time.Time) bool {
	t.Helper()
	st := e2eutil.Summarize(replies)
	gap, from := e2eutil.LongestGap(replies)
	t.Logf("request loop over %v: %v", time.Since(start).Round(time.Second), st)
	t.Logf("longest gap without an answer: %v, beginning %v after the kill", gap.Round(time.Millisecond), from.Sub(killedAt).Round(time.Millisecond))
	if st.Failed > 0 {
		t.Logf("failed requests (time after the loop's start, the kill at +%v):\n%s", killedAt.Sub(start).Round(time.Millisecond), e2eutil.Failures(replies, start, 20))
	}
	var outside []string
	for _, r := range replies {
		if r.Err != nil && (r.At.Before(killedAt.Add(-e2eutil.RequestTimeout)) || r.At.After(failUntil)) {
			outside = append(outside, fmt.Sprintf("+%v: %v", r.At.Sub(killedAt).Round(time.Millisecond), r.Err))
		}
	}
	if len(outside) > 0 {
		t.Errorf("%d requests failed after +%v (times after the kill):\n%s", len(outside), failUntil.Sub(killedAt).Round(time.Millisecond), strings.Join(outside, "\n"))
	}
	return len(outside) == 0
}
