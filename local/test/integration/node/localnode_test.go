// Package localnode_test runs the local node against a real control plane
// (kube-apiserver, scheduler, controller-manager) with real pod sandboxes
// and runc containers: pods scheduled to it run as processes.
package node_test

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/tools/remotecommand"
	"k8s.io/client-go/transport/spdy"
	utilexec "k8s.io/client-go/util/exec"
	"k8s.io/utils/ptr"

	"github.com/ray-operator/ray-operator/internal/testing/capability"
	"github.com/ray-operator/ray-operator/internal/testing/testenv"
	"github.com/ray-operator/ray-operator/local/internal/containerlog"
	"github.com/ray-operator/ray-operator/local/internal/imagestore"
	"github.com/ray-operator/ray-operator/local/internal/localpv"
	"github.com/ray-operator/ray-operator/local/internal/netpolicy"
	localnode "github.com/ray-operator/ray-operator/local/internal/node"
	"github.com/ray-operator/ray-operator/local/internal/podinputs"
	"github.com/ray-operator/ray-operator/local/internal/podworker"
	"github.com/ray-operator/ray-operator/local/internal/sandbox"
)

const (
	timeout   = 90 * time.Second
	namespace = "ln"
	rayImage  = "rayproject/ray:2.60.0"
)

// cluster is a control plane with one local node.
type cluster struct {
	cs      kubernetes.Interface
	node    *localnode.Node
	kubelet netip.AddrPort
	// gateway is the node's address on the pods' bridge.
	gateway netip.Addr
	// shared is the host directory the node shares with hostPath volumes.
	shared string
	// volumes is the node's volume directory.
	volumes string
	// seccomp is the node's directory of Localhost seccomp profiles.
	seccomp string
	// stateDir is the sandbox host's state directory (pods/<uid>/logs).
	stateDir string
	// images is the node's image store directory.
	images string
}

func TestLocalNode(t *testing.T) {
	if os.Geteuid() != 0 {
		capability.Missing(t, "the local node needs root: network namespaces, mounts and runc")
	}
	runc, err := exec.LookPath("runc")
	if err != nil {
		capability.Missing(t, "runc is not installed (hack/node-packages.sh installs it)")
	}
	env := testenv.Start(t, testenv.WithFullControlPlane(0), testenv.WithNodeMonitorGracePeriod(localnode.NodeMonitorGracePeriod))
	c := startCluster(t, env, runc)

	t.Run("node is Ready with its addresses and capacity", func(t *testing.T) { testNode(t, c) })
	t.Run("pod with configMap volume, secret env and podIP succeeds, logs served", func(t *testing.T) { testInputsPod(t, c) })
	t.Run("failing liveness probe restarts the container", func(t *testing.T) { testLiveness(t, c) })
	t.Run("probes run from the pod's network namespace; a failing answer's body stays out of events", func(t *testing.T) { testProbesFromThePod(t, c) })
	t.Run("exec and port-forward through the kubelet API", func(t *testing.T) { testExecPortForward(t, c) })
	t.Run("host access: refused pods fail with reason, message and event; a shared hostPath runs", func(t *testing.T) { testHostAccess(t, c) })
	t.Run("a container's own layers: a subPath mount where the host's root has no directory, writes kept from the host and gone on restart, read-only root", func(t *testing.T) { testContainerLayers(t, c) })
	t.Run("securityContext: honoured as a kubelet does, or refused with the kubelet's reason", func(t *testing.T) { testSecurityContext(t, c) })
	t.Run("a claim of the default class is provisioned, mounted, kept across pods and deleted", func(t *testing.T) { testPersistentVolumes(t, c) })
	t.Run("a claim's capacity: writing past it fails with ENOSPC, the host's disk gives no more; growing it is refused", func(t *testing.T) { testPersistentVolumeCapacity(t, c) })
	t.Run("a pod whose claim is unbound waits in ContainerCreating", func(t *testing.T) { testUnboundClaim(t, c) })
	t.Run("a hand-made PV on a host path is not mounted", func(t *testing.T) { testHostPersistentVolume(t, c) })
	t.Run("hostPaths swapped for symlinks by another pod after admission are refused, nothing created on the host", func(t *testing.T) { testSwappedHostPaths(t, c) })
	t.Run("readiness gates follow conditions set through the status API", func(t *testing.T) { testReadinessGates(t, c) })
	t.Run("a lowered activeDeadlineSeconds fails the pod", func(t *testing.T) { testActiveDeadline(t, c) })
	t.Run("an image change restarts the container", func(t *testing.T) { testImageChange(t, c) })
	t.Run("a Ray image tag runs its Ray release, installed as the image pull; a release PyPI lacks fails the pull", func(t *testing.T) { testRayRelease(t, c) })
	t.Run("a container restartPolicy OnFailure restarts it in a Never pod", func(t *testing.T) { testContainerRestartPolicy(t, c) })
	t.Run("NetworkPolicies: ingress deny isolates a pod until deleted; egress deny blocks the node but the DNS port it allows", func(t *testing.T) { testNetworkPolicies(t, c) })
	t.Run("disconnected past the node-monitor grace period: node and pod marked, pod kept on Reconnect, deleted pod removed", func(t *testing.T) { testDisconnect(t, c) })
	t.Run("a pod that forks without end stops at its pids limit; a pod beside it runs", func(t *testing.T) { testForkBomb(t, c) })
	t.Run("a pod that writes without end to stdout has its log rotated", func(t *testing.T) { testEndlessStdout(t, c) })
	t.Run("a pod that fills its emptyDir past the sizeLimit is evicted", func(t *testing.T) { testEmptyDirFilled(t, c) })
	t.Run("an image from a registry runs with its config; a wrong digest and an unauthorised pull fail ErrImagePull", func(t *testing.T) { testRegistryImages(t, c) })
	t.Run("an image loaded from an archive runs by its tag with IfNotPresent and Never; Always asks the registry; a corrupt archive leaves nothing; a pod waiting with Never starts once its image is loaded", func(t *testing.T) { testImageArchive(t, c) })
	t.Run("start latency and agent memory", func(t *testing.T) { measure(t, c) })
	if err := c.node.Stop(t.Context()); err != nil {
		t.Errorf("Stop: %v", err)
	}
	if _, err := c.cs.CoreV1().Nodes().Get(t.Context(), "ray-local", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("node still exists after Stop: %v", err)
	}
}

// startCluster starts a sandbox host and the local node.
func startCluster(t *testing.T, env *testenv.Env, runc string) *cluster {
	t.Helper()
	dir := t.TempDir()
	slot := nodeSlot(t)
	host, err := sandbox.NewHost(t.Context(), sandbox.HostConfig{
		StateDir: dir, BridgeName: fmt.Sprintf("rlntest%d", slot), PodCIDR: netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 252, byte(slot), 0}), 24), RuncBinary: runc,
		Log: testr.New(t),
	})
	if err != nil {
		t.Fatalf("NewHost: %v", err)
	}
	t.Cleanup(func() {
		if err := host.Close(context.Background()); err != nil {
			t.Errorf("closing the sandbox host: %v", err)
		}
	})
	// Before the node, as the local cluster does: no pod runs unpoliced.
	// Queue and table differ from the local cluster's, which may run too.
	enforcer, err := netpolicy.Start(t.Context(), netpolicy.Config{
		RESTConfig: env.Config, NodeName: "ray-local", Bridge: host.Bridge(), PodCIDR: host.PodCIDR(),
		QueueID: netpolicy.DefaultQueueID + 1 + uint16(slot), Table: fmt.Sprintf("rlntest%d-netpol", slot), Log: testr.New(t),
	})
	if err != nil {
		t.Fatalf("starting the network policy enforcer: %v", err)
	}
	t.Cleanup(func() {
		if err := enforcer.Stop(); err != nil {
			t.Errorf("stopping the network policy enforcer: %v", err)
		}
	})
	port := freePort(t)
	listen := netip.AddrPortFrom(host.Gateway(), port)
	shared := sharedDir(t)
	volumes := filepath.Join(dir, "volumes")
	// Before the state directory's removal: a volume a failed test left
	// mounted.
	t.Cleanup(func() {
		if err := localpv.DetachAll(volumes); err != nil {
			t.Errorf("unmounting the volumes: %v", err)
		}
	})
	seccomp := seccompDir(t, dir)
	images := filepath.Join(dir, "images")
	store, err := imagestore.Open(images, imagestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	node, err := localnode.Start(t.Context(), localnode.Config{
		Settings: localnode.Settings{
			ClusterDNS:     []string{host.Gateway().String()},
			ListenAddress:  listen,
			SharedHostDirs: []string{shared},
			VolumeDir:      volumes,
			SeccompDir:     seccomp,
			Limits: podworker.Limits{
				PodPids:              testPodPids,
				LogRotation:          containerlog.Rotation{MaxSize: testLogMaxSize, MaxFiles: testLogMaxFiles},
				LogCheckInterval:     testHousekeepEvery,
				StorageCheckInterval: testHousekeepEvery,
			},
		},
		RESTConfig: env.Config, Sandboxes: host,
		Images:     podinputs.DefaultImages(testRayImages(t), "/usr/bin/redis-server"),
		ImageStore: store,
		Log:        testr.New(t),
	})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { _ = node.Stop(context.Background()) })
	cs := kubernetes.NewForConfigOrDie(env.Config)
	if _, err := cs.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return &cluster{cs: cs, node: node, kubelet: listen, gateway: host.Gateway(), shared: shared, volumes: volumes, seccomp: seccomp, stateDir: dir, images: images}
}

// nodeSlots is how many runs of this suite may share the machine (two
// worktrees' `make test`, say): each takes a slot, which gives it a
// bridge, pod range, nfqueue and nftables table of its own. Slot 0 (bridge
// rlntest0, 10.252.0.0/24, queue 2471) is left to older checkouts, which
// took it without asking.
const nodeSlots = 16

// nodeSlot takes the first free slot for the test's duration (an flock,
// released however the process ends).
func nodeSlot(t *testing.T) int {
	t.Helper()
	for slot := 1; slot <= nodeSlots; slot++ {
		path := fmt.Sprintf("/run/lock/ray-operator-node-suite-%d.lock", slot)
		f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
		if err != nil {
			t.Fatalf("opening %s: %v", path, err)
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			_ = f.Close()
			continue
		}
		t.Cleanup(func() { _ = f.Close() })
		return slot
	}
	t.Fatalf("all %d slots of the node suite are taken on this machine", nodeSlots)
	return 0
}

// sharedDir makes the directory the node shares, readable by all: a pod's
// container root is an unprivileged user of the host.
func sharedDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err == nil {
		err = os.Chmod(dir, 0o755)
	}
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, "greeting"), []byte("hello-from-the-host\n"), 0o644)
	}
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func freePort(t *testing.T) uint16 {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	return uint16(l.Addr().(*net.TCPAddr).Port)
}

func testNode(t *testing.T, c *cluster) {
	// The API server taints a new node not-ready; the node lifecycle
	// controller lifts it once it sees the node Ready, as for a kubelet.
	var node *corev1.Node
	err := wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		var err error
		node, err = c.cs.CoreV1().Nodes().Get(ctx, "ray-local", metav1.GetOptions{})
		return err == nil && len(node.Spec.Taints) == 0, nil
	})
	if err != nil {
		t.Fatalf("node not untainted: %v (%+v)", err, node)
	}
	if node.Labels[corev1.LabelOSStable] != "linux" || node.Labels[corev1.LabelArchStable] != goruntime.GOARCH || len(node.Spec.Taints) != 0 {
		t.Errorf("labels %v, taints %v", node.Labels, node.Spec.Taints)
	}
	want := []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: c.kubelet.Addr().String()}, {Type: corev1.NodeHostName, Address: "ray-local"}}
	if fmt.Sprint(node.Status.Addresses) != fmt.Sprint(want) || node.Status.DaemonEndpoints.KubeletEndpoint.Port != int32(c.kubelet.Port()) {
		t.Errorf("addresses %v, kubelet port %d", node.Status.Addresses, node.Status.DaemonEndpoints.KubeletEndpoint.Port)
	}
	testCapacity(t, node)
	if _, err := c.cs.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(t.Context(), "ray-local", metav1.GetOptions{}); err != nil {
		t.Errorf("node lease: %v", err)
	}
}

// testCapacity checks what the node advertises by default: capacity and
// allocatable of the larger of 16 and 4 times the machine's CPUs (every
// KubeRay sample fits on 2 CPUs), the machine's memory, and why, on the
// Node.
func testCapacity(t *testing.T, node *corev1.Node) {
	t.Helper()
	machine, err := localnode.ReadMachine()
	if err != nil {
		t.Fatal(err)
	}
	want := corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewQuantity(max(4*int64(goruntime.NumCPU()), 16), resource.DecimalSI),
		corev1.ResourceMemory: *resource.NewQuantity(machine.MemoryBytes, resource.BinarySI),
		corev1.ResourcePods:   resource.MustParse("110"),
	}
	same := cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })
	if diff := cmp.Diff(want, node.Status.Capacity, same); diff != "" {
		t.Errorf("capacity (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, node.Status.Allocatable, same); diff != "" {
		t.Errorf("allocatable (-want +got):\n%s", diff)
	}
	note := node.Annotations[localnode.CapacityAnnotation]
	wantNote := fmt.Sprintf("cpu: %s (the larger of 16 and 4 times the machine's %d CPUs", want.Cpu(), goruntime.NumCPU())
	if !strings.HasPrefix(note, wantNote) || !strings.Contains(note, "memory: "+want.Memory().String()+" (the machine's") {
		t.Errorf("annotation %s: %q, want it to start %q and give the machine's memory", localnode.CapacityAnnotation, note, wantNote)
	}
}

func testInputsPod(t *testing.T, c *cluster) {
	ctx := t.Context()
	_, err := c.cs.CoreV1().ConfigMaps(namespace).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm"}, Data: map[string]string{"greeting": "hello-from-configmap"}}, metav1.CreateOptions{})
	mustCreate(t, err)
	_, err = c.cs.CoreV1().Secrets(namespace).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s"}, StringData: map[string]string{"password": "s3cret"}}, metav1.CreateOptions{})
	mustCreate(t, err)
	pod := sleepPod("inputs", "cat /cfg/greeting; echo; echo pw=$PASSWORD; echo ip=$POD_IP")
	pod.Spec.RestartPolicy = corev1.RestartPolicyNever
	pod.Spec.Volumes = []corev1.Volume{{Name: "cfg", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cm"}}}}}
	ctr := &pod.Spec.Containers[0]
	ctr.VolumeMounts = []corev1.VolumeMount{{Name: "cfg", MountPath: "/cfg"}}
	ctr.Env = []corev1.EnvVar{
		{Name: "PASSWORD", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "s"}, Key: "password"}}},
		{Name: "POD_IP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"}}},
	}
	got := createAndWait(t, c, pod, "Succeeded", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodSucceeded })
	st := got.Status.ContainerStatuses[0]
	if st.State.Terminated == nil || st.State.Terminated.Reason != "Completed" || !strings.HasPrefix(st.ContainerID, "runc://") {
		t.Errorf("container status %+v", st)
	}
	logs := kubeletLogs(t, c, "inputs", "main")
	want := fmt.Sprintf("hello-from-configmap\npw=s3cret\nip=%s\n", got.Status.PodIP)
	if logs != want {
		t.Errorf("logs = %q, want %q", logs, want)
	}
	deleteAndWait(t, c, "inputs")
}

func testLiveness(t *testing.T, c *cluster) {
	pod := sleepPod("liveness", "exec sleep 1000")
	pod.Spec.TerminationGracePeriodSeconds = ptr.To[int64](1)
	pod.Spec.Containers[0].LivenessProbe = &corev1.Probe{
		ProbeHandler:  corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"false"}}},
		PeriodSeconds: 1, FailureThreshold: 1,
	}
	got := createAndWait(t, c, pod, "a restart", func(p *corev1.Pod) bool {
		return len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].RestartCount >= 1
	})
	if last := got.Status.ContainerStatuses[0].LastTerminationState.Terminated; last == nil || last.ExitCode == 0 {
		t.Errorf("lastState %+v, want a killed attempt", got.Status.ContainerStatuses[0].LastTerminationState)
	}
	deleteAndWait(t, c, "liveness")
}

// measure reports the time from pod creation to Running (sleep) and to
// Succeeded (python3 -c 'print(1)'), and the agent's heap per 10 pods.
func measure(t *testing.T, c *cluster) {
	start := time.Now()
	createAndWait(t, c, sleepPod("sleep", "exec sleep 1000"), "Running", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })
	t.Logf("sleep pod: create to Running %v", time.Since(start).Round(time.Millisecond))
	start = time.Now()
	py := sleepPod("python", "exec python3 -c 'print(1)'")
	py.Spec.RestartPolicy = corev1.RestartPolicyNever
	createAndWait(t, c, py, "Succeeded", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodSucceeded })
	t.Logf("python3 -c 'print(1)' pod: create to Succeeded %v", time.Since(start).Round(time.Millisecond))
	deleteAndWait(t, c, "sleep", "python")

	before := heapInUse()
	start = time.Now()
	for i := range 10 {
		_, err := c.cs.CoreV1().Pods(namespace).Create(t.Context(), sleepPod(fmt.Sprintf("m%d", i), "exec sleep 1000"), metav1.CreateOptions{})
		mustCreate(t, err)
	}
	for i := range 10 {
		waitPod(t, c, fmt.Sprintf("m%d", i), "Running", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })
	}
	t.Logf("10 sleep pods: create to all Running %v; heap in use +%d KiB for 10 pods", time.Since(start).Round(time.Millisecond), (heapInUse()-before)/1024)
	names := make([]string, 0, 10)
	for i := range 10 {
		names = append(names, fmt.Sprintf("m%d", i))
	}
	deleteAndWait(t, c, names...)
}

func heapInUse() int64 {
	goruntime.GC()
	var m goruntime.MemStats
	goruntime.ReadMemStats(&m)
	return int64(m.HeapInuse)
}

// sleepPod is a Ray-image pod running script with sh.
func sleepPod(name, script string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: corev1.PodSpec{
			Containers:                    []corev1.Container{{Name: "main", Image: rayImage, Command: []string{"sh", "-c", script}}},
			TerminationGracePeriodSeconds: ptr.To[int64](5),
		},
	}
}

func mustCreate(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// createAndWait creates pod (retrying while the namespace's default service
// account does not exist yet) and waits until ok holds.
func createAndWait(t *testing.T, c *cluster, pod *corev1.Pod, what string, ok func(*corev1.Pod) bool) *corev1.Pod {
	t.Helper()
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		_, err := c.cs.CoreV1().Pods(namespace).Create(ctx, pod, metav1.CreateOptions{})
		return err == nil, nil
	})
	if err != nil {
		t.Fatalf("creating pod %s: %v", pod.Name, err)
	}
	return waitPod(t, c, pod.Name, what, ok)
}

// waitPod waits until the pod satisfies ok.
func waitPod(t *testing.T, c *cluster, name, what string, ok func(*corev1.Pod) bool) *corev1.Pod {
	t.Helper()
	var got *corev1.Pod
	err := wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		p, err := c.cs.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		got = p
		return ok(p), nil
	})
	if err != nil {
		t.Fatalf("pod %s never reached %s: %v; last status %+v", name, what, err, got)
	}
	return got
}

// deleteAndWait deletes pods and waits until the node removed them.
func deleteAndWait(t *testing.T, c *cluster, names ...string) {
	t.Helper()
	for _, name := range names {
		if err := c.cs.CoreV1().Pods(namespace).Delete(t.Context(), name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range names {
		err := wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
			_, err := c.cs.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
			return apierrors.IsNotFound(err), nil
		})
		if err != nil {
			t.Fatalf("pod %s was not removed: %v", name, err)
		}
	}
}

// kubeletLogs reads a container's log from the kubelet API directly (the
// API server's log proxy needs --kubelet-preferred-address-types with
// InternalIP first, which the control plane does not set yet).
func kubeletLogs(t *testing.T, c *cluster, pod, container string) string {
	t.Helper()
	return kubeletLogsQuery(t, c, pod, container, "")
}

// kubeletLogsQuery is kubeletLogs with a query ("tailLines=1").
func kubeletLogsQuery(t *testing.T, c *cluster, pod, container, query string) string {
	t.Helper()
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // self-signed node certificate
	url := fmt.Sprintf("https://%s%s?%s", c.kubelet, filepath.Join("/containerLogs", namespace, pod, container), query)
	resp, err := client.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s %s", url, resp.Status, body)
	}
	return string(body)
}

func testExecPortForward(t *testing.T, c *cluster) {
	createAndWait(t, c, sleepPod("web", "exec python3 -m http.server 8080 --bind 127.0.0.1"), "Running", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })
	defer deleteAndWait(t, c, "web")
	cfg := &rest.Config{Host: "https://" + c.kubelet.String(), TLSClientConfig: rest.TLSClientConfig{Insecure: true}}

	var out, errOut strings.Builder
	err := kubeletExec(t, cfg, "web", []string{"sh", "-c", "echo out; echo err >&2; exit 3"}, &out, &errOut)
	var exitErr utilexec.CodeExitError
	if !errors.As(err, &exitErr) || exitErr.Code != 3 || exitErr.Error() != "command terminated with exit code 3" {
		t.Errorf("exec error = %v, want exit code 3", err)
	}
	if out.String() != "out\n" || errOut.String() != "err\n" {
		t.Errorf("exec stdout %q, stderr %q", out.String(), errOut.String())
	}

	// The server binds 127.0.0.1 inside the pod: only port-forward reaches it.
	var body string
	err = wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		b, err := forwardGet(t, cfg, "web", 8080)
		body = b
		return err == nil, nil
	})
	if err != nil || !strings.Contains(body, "Directory listing") {
		t.Errorf("GET through port-forward: %v, body %q", err, body)
	}
}

// kubeletExec runs cmd in the pod's main container as kubectl exec does.
func kubeletExec(t *testing.T, cfg *rest.Config, pod string, cmd []string, stdout, stderr io.Writer) error {
	t.Helper()
	return kubeletExecIn(t, cfg, namespace, pod, cmd, stdout, stderr)
}

// kubeletExecIn runs cmd in the main container of pod in namespace ns.
func kubeletExecIn(t *testing.T, cfg *rest.Config, ns, pod string, cmd []string, stdout, stderr io.Writer) error {
	t.Helper()
	q := url.Values{"output": {"1"}, "error": {"1"}, "command": cmd}
	u, _ := url.Parse(fmt.Sprintf("%s/exec/%s/%s/main?%s", cfg.Host, ns, pod, q.Encode()))
	exec, err := remotecommand.NewSPDYExecutor(cfg, http.MethodPost, u)
	if err != nil {
		t.Fatal(err)
	}
	return exec.StreamWithContext(t.Context(), remotecommand.StreamOptions{Stdout: stdout, Stderr: stderr})
}

// forwardGet forwards a local port to port in pod and GETs / through it.
func forwardGet(t *testing.T, cfg *rest.Config, pod string, port int) (string, error) {
	t.Helper()
	rt, upgrader, err := spdy.RoundTripperFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(fmt.Sprintf("%s/portForward/%s/%s", cfg.Host, namespace, pod))
	dialer := spdy.NewDialer(upgrader, &http.Client{Transport: rt}, http.MethodPost, u)
	stop, ready := make(chan struct{}), make(chan struct{})
	fw, err := portforward.NewOnAddresses(dialer, []string{"127.0.0.1"}, []string{fmt.Sprintf("0:%d", port)}, stop, ready, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- fw.ForwardPorts() }()
	defer func() {
		close(stop)
		if err := <-done; err != nil {
			t.Logf("port-forward ended: %v", err)
		}
	}()
	select {
	case <-ready:
	case err := <-done:
		done <- err // for the deferred receive
		return "", err
	}
	ports, err := fw.GetPorts()
	if err != nil {
		return "", err
	}
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/", ports[0].Local))
	if err != nil {
		return "", err
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

func testHostAccess(t *testing.T, c *cluster) {
	refused := map[string]struct {
		pod             func(*corev1.Pod)
		reason, message string
	}{
		"privileged": {
			pod: func(p *corev1.Pod) {
				p.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: ptr.To(true)}
			},
			reason: "HostPrivilegesForbidden",
			message: `the pod needs root on the host: container "main" sets securityContext.privileged: true; ` +
				"the node runs such pods only when started with --allow-host-privileges",
		},
		"hostpath-outside": {
			pod: func(p *corev1.Pod) {
				p.Spec.Volumes = []corev1.Volume{{Name: "etc", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/etc"}}}}
			},
			reason:  "HostPathForbidden",
			message: `hostPath volume "etc" (/etc) is not under a directory the node shares (--shared-host-dirs: ` + c.shared + `)`,
		},
	}
	for name, tc := range refused {
		pod := sleepPod(name, "exec sleep 1000")
		tc.pod(pod)
		got := createAndWait(t, c, pod, "Failed", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodFailed })
		if got.Status.Reason != tc.reason || got.Status.Message != tc.message || len(got.Status.ContainerStatuses) != 0 {
			t.Errorf("pod %s: reason %q, message %q, container statuses %+v; want %q, %q, none",
				name, got.Status.Reason, got.Status.Message, got.Status.ContainerStatuses, tc.reason, tc.message)
		}
		waitEvent(t, c, name, tc.reason, tc.message)
	}

	pod := sleepPod("hostpath-shared", "cat /host/greeting")
	pod.Spec.RestartPolicy = corev1.RestartPolicyNever
	pod.Spec.Volumes = []corev1.Volume{{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: c.shared}}}}
	pod.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "host", MountPath: "/host", ReadOnly: true}}
	createAndWait(t, c, pod, "Succeeded", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodSucceeded })
	if logs := kubeletLogs(t, c, "hostpath-shared", "main"); logs != "hello-from-the-host\n" {
		t.Errorf("logs = %q", logs)
	}
	deleteAndWait(t, c, "privileged", "hostpath-outside", "hostpath-shared")
}

// waitEvent waits for the Warning event on pod with reason and message.
func waitEvent(t *testing.T, c *cluster, pod, reason, message string) {
	t.Helper()
	waitEventWhere(t, c, pod, reason, func(m string) bool { return m == message })
}
