package cluster_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/remotecommand"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/local/internal/netaddons"
	"github.com/ray-operator/ray-operator/local/test/netprobe"
)

// netpolRayJob is a K8sJobMode RayJob whose cluster (a head and one
// worker) is isolated with DenyAll. Its only rule lets the head and the
// workers ask DNS on port 53 anywhere: on the local cluster CoreDNS runs
// on the node, not as a kube-system Pod, so the sample's rule (kube-dns
// Pods) selects nothing here. The cluster stays after the job, for the
// checks that follow.
const netpolRayJob = `
apiVersion: ray.io/v1
kind: RayJob
metadata:
  name: netpol
spec:
  entrypoint: |-
    python -c "import ray; ray.init(); print('task says', ray.get(ray.remote(lambda: 'hello').remote()))"
  shutdownAfterJobFinishes: false
  submitterPodTemplate:
    spec:
      restartPolicy: Never
      containers:
        - name: ray-job-submitter
          image: rayproject/ray:2.60.0
          resources:
            requests: {cpu: 100m, memory: 256Mi}
            limits: {cpu: 500m, memory: 1Gi}
  rayClusterSpec:
    networkPolicy:
      mode: DenyAll
      head:
        egressRules: [{ports: [{port: 53, protocol: UDP}, {port: 53, protocol: TCP}]}]
      worker:
        egressRules: [{ports: [{port: 53, protocol: UDP}, {port: 53, protocol: TCP}]}]
    headGroupSpec:
      rayStartParams: {}
      template:
        spec:
          containers:
            - name: ray-head
              image: rayproject/ray:2.60.0
              resources:
                requests: {cpu: 500m, memory: 1Gi}
                limits: {cpu: "1", memory: 2Gi}
    workerGroupSpecs:
      - groupName: workers
        replicas: 1
        minReplicas: 1
        maxReplicas: 1
        rayStartParams: {}
        template:
          spec:
            containers:
              - name: ray-worker
                image: rayproject/ray:2.60.0
                resources:
                  requests: {cpu: 500m, memory: 1Gi}
                  limits: {cpu: "1", memory: 1Gi}
`

// netpolTimeout bounds each wait for a changed policy to take effect.
const netpolTimeout = time.Minute

// TestNetworkPolicyEnforced: the NetworkPolicies the operator makes for a
// RayCluster (gate RayClusterNetworkPolicy) hold on the local cluster,
// whose node enforces them. Under DenyAll with a DNS rule a K8sJobMode
// RayJob, whose submitter the head policy admits to the dashboard,
// succeeds with a task on the cluster; a Pod in another namespace, which
// reaches a listener on the node, cannot reach the head's GCS or
// dashboard; the head cannot reach that listener but gets DNS answers.
// Then the RayCluster's networkPolicy is changed: DenyAll without the DNS
// rule (the head's DNS queries go unanswered), DenyAllEgress (the other
// namespace reaches the dashboard again, the head still not the node),
// and removed (the head reaches the node).
func TestNetworkPolicyEnforced(t *testing.T) {
	began := time.Now()
	ns, other := shared.namespace(t), shared.namespace(t)
	shared.applyManifest(t, ns, "netpolRayJob", []byte(netpolRayJob))
	job := shared.waitRayJob(t, ns, "netpol", rayJobTimeout)
	if job.Status.JobStatus != rayv1.JobStatusSucceeded {
		t.Fatalf("RayJob under DenyAll: %s/%s, message %q\nsubmitter:\n%s", job.Status.JobDeploymentStatus, job.Status.JobStatus, job.Status.Message, shared.submitterLogs(t, ns, "netpol"))
	}
	if logs := shared.submitterLogs(t, ns, "netpol"); !strings.Contains(logs, "task says hello") {
		t.Errorf("the job's task did not answer; submitter logs:\n%s", logs)
	}
	cluster := job.Status.RayClusterName
	shared.checkPolicies(t, ns, cluster)
	t.Logf("RayJob succeeded under DenyAll after %v", time.Since(began).Round(time.Second))

	head := shared.headPodObj(t, ns, cluster)
	headIP := netip.MustParseAddr(head.Status.PodIP)
	listener := netprobe.ListenTCP(t, shared.Cluster.Network.Gateway())
	prober := shared.proberPod(t, other)
	dnsName := cluster + "-head-svc." + ns + ".svc.cluster.local"
	dns := netip.AddrPortFrom(netaddons.ClusterDNSAddr, 53)

	shared.expectProbe(t, other, prober, "probe", netprobe.TCP("python", listener), netprobe.Connected)
	for _, port := range []uint16{6379, 8265} {
		shared.expectProbe(t, other, prober, "probe", netprobe.TCP("python", netip.AddrPortFrom(headIP, port)), netprobe.Timeout)
	}
	shared.expectProbe(t, ns, head.Name, "ray-head", netprobe.DNS("python", dns, dnsName), netprobe.Answered)
	shared.expectProbe(t, ns, head.Name, "ray-head", netprobe.TCP("python", listener), netprobe.Timeout)

	shared.setNetworkPolicy(t, ns, cluster, &rayv1.NetworkPolicyConfig{Mode: ptr.To(rayv1.NetworkPolicyDenyAll)})
	shared.waitProbe(t, ns, head.Name, "ray-head", netprobe.DNS("python", dns, dnsName), netprobe.Timeout)

	shared.setNetworkPolicy(t, ns, cluster, &rayv1.NetworkPolicyConfig{Mode: ptr.To(rayv1.NetworkPolicyDenyAllEgress)})
	shared.waitProbe(t, other, prober, "probe", netprobe.TCP("python", netip.AddrPortFrom(headIP, 8265)), netprobe.Connected)
	shared.expectProbe(t, ns, head.Name, "ray-head", netprobe.TCP("python", listener), netprobe.Timeout)

	shared.setNetworkPolicy(t, ns, cluster, nil)
	shared.waitProbe(t, ns, head.Name, "ray-head", netprobe.TCP("python", listener), netprobe.Connected)
	t.Logf("done in %v", time.Since(began).Round(time.Second))
}

// checkPolicies fails unless the cluster's head and worker group policies
// exist.
func (s *suite) checkPolicies(t *testing.T, ns, cluster string) {
	t.Helper()
	for _, name := range []string{cluster + "-head", cluster + "-workers-workers"} {
		if err := s.Client.Get(t.Context(), types.NamespacedName{Namespace: ns, Name: name}, &networkingv1.NetworkPolicy{}); err != nil {
			t.Errorf("NetworkPolicy %s: %v", name, err)
		}
	}
}

// headPodObj returns the head Pod of the cluster.
func (s *suite) headPodObj(t *testing.T, ns, cluster string) *corev1.Pod {
	t.Helper()
	pod := &corev1.Pod{}
	if err := s.Client.Get(t.Context(), types.NamespacedName{Namespace: ns, Name: s.headPod(t, ns, cluster)}, pod); err != nil {
		t.Fatal(err)
	}
	return pod
}

// proberPod runs a Ray-image Pod that sleeps in ns and returns its name.
func (s *suite) proberPod(t *testing.T, ns string) string {
	t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "prober", Namespace: ns},
		Spec: corev1.PodSpec{
			Containers:                    []corev1.Container{{Name: "probe", Image: "rayproject/ray:2.60.0", Command: []string{"sleep", "3600"}}},
			TerminationGracePeriodSeconds: ptr.To[int64](1),
		},
	}
	ctx, cancel := context.WithTimeout(t.Context(), netpolTimeout)
	defer cancel()
	err := poll(ctx, func() (bool, error) {
		// The namespace's default ServiceAccount may not exist yet.
		err := s.Client.Create(ctx, pod)
		return err == nil, err
	})
	if err != nil {
		t.Fatalf("creating the prober Pod: %v", err)
	}
	s.waitPodRunning(ctx, t, ns, pod.Name)
	return pod.Name
}

// probe runs a netprobe command in a container and returns its verdict.
func (s *suite) probe(ctx context.Context, ns, pod, container string, cmd []string) string {
	req := s.Clientset.CoreV1().RESTClient().Post().Resource("pods").Namespace(ns).Name(pod).SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{Container: container, Command: cmd, Stdout: true, Stderr: true}, scheme.ParameterCodec)
	exec, err := remotecommand.NewSPDYExecutor(s.Cluster.RESTConfig(), http.MethodPost, req.URL())
	if err != nil {
		return err.Error()
	}
	var stdout, stderr bytes.Buffer
	if err := exec.StreamWithContext(ctx, remotecommand.StreamOptions{Stdout: &stdout, Stderr: &stderr}); err != nil {
		return fmt.Sprintf("exec: %v: %s", err, stderr.String())
	}
	return strings.TrimSpace(stdout.String())
}

// expectProbe fails unless the probe's verdict is want now.
func (s *suite) expectProbe(t *testing.T, ns, pod, container string, cmd []string, want string) {
	t.Helper()
	if got := s.probe(t.Context(), ns, pod, container, cmd); got != want {
		t.Errorf("%v from %s/%s: %q, want %q", cmd[3:], ns, pod, got, want)
	}
}

// waitProbe probes until the verdict is want: a changed policy takes a
// moment to reach the node.
func (s *suite) waitProbe(t *testing.T, ns, pod, container string, cmd []string, want string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), netpolTimeout)
	defer cancel()
	err := poll(ctx, func() (bool, error) {
		got := s.probe(ctx, ns, pod, container, cmd)
		return got == want, fmt.Errorf("last verdict %q", got)
	})
	if err != nil {
		t.Fatalf("%v from %s/%s never gave %q: %v", cmd[3:], ns, pod, want, err)
	}
}

// setNetworkPolicy sets the RayCluster's spec.networkPolicy.
func (s *suite) setNetworkPolicy(t *testing.T, ns, name string, np *rayv1.NetworkPolicyConfig) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		rc := &rayv1.RayCluster{}
		if err := s.Client.Get(t.Context(), types.NamespacedName{Namespace: ns, Name: name}, rc); err != nil {
			return err
		}
		rc.Spec.NetworkPolicy = np
		return s.Client.Update(t.Context(), rc)
	})
	if err != nil {
		t.Fatalf("setting spec.networkPolicy of RayCluster %s: %v", name, err)
	}
}
