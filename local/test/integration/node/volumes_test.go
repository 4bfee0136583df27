package node_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
)

func claim(name string, class *string) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: corev1.PersistentVolumeClaimSpec{
			StorageClassName: class,
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("64Mi")}},
		},
	}
}

// claimPod runs script with claim mounted at /data (and read-only at /ro).
func claimPod(name, claim, script string) *corev1.Pod {
	pod := sleepPod(name, script)
	pod.Spec.RestartPolicy = corev1.RestartPolicyNever
	pod.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
		PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}}}
	pod.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{
		{Name: "data", MountPath: "/data"},
		{Name: "data", MountPath: "/ro", ReadOnly: true},
		{Name: "data", MountPath: "/sub", SubPath: "nested/dir"},
	}
	return pod
}

func finished(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}

// runToCompletion runs pod and fails the test, with its logs, unless it
// succeeds.
func runToCompletion(t *testing.T, c *cluster, pod *corev1.Pod) {
	t.Helper()
	if got := createAndWait(t, c, pod, "Succeeded or Failed", finished); got.Status.Phase != corev1.PodSucceeded {
		t.Fatalf("pod %s failed: %+v; logs %q", pod.Name, got.Status.ContainerStatuses, kubeletLogs(t, c, pod.Name, "main"))
	}
}

// testPersistentVolumes: a claim of the default StorageClass is provisioned
// once its pod is scheduled; a pod writes to it (also through a subPath,
// and not through a read-only mount), the next pod reads it back; deleting
// the claim deletes the PV and its directory.
func testPersistentVolumes(t *testing.T, c *cluster) {
	ctx := t.Context()
	_, err := c.cs.CoreV1().PersistentVolumeClaims(namespace).Create(ctx, claim("data", nil), metav1.CreateOptions{})
	mustCreate(t, err)
	runToCompletion(t, c, claimPod("writer", "data",
		"echo kept > /data/f && echo sub > /sub/g && if (echo x > /ro/h); then exit 3; fi"))
	pvc, err := c.cs.CoreV1().PersistentVolumeClaims(namespace).Get(ctx, "data", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := ptr.Deref(pvc.Spec.StorageClassName, ""); got != "standard" || pvc.Status.Phase != corev1.ClaimBound {
		t.Fatalf("claim: class %q, phase %s; want standard, Bound", got, pvc.Status.Phase)
	}
	pv, err := c.cs.CoreV1().PersistentVolumes().Get(ctx, pvc.Spec.VolumeName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(c.volumes, pv.Name)
	if pv.Spec.Local == nil || pv.Spec.Local.Path != dir || pv.Annotations["pv.kubernetes.io/provisioned-by"] != "ray-local/local-path" {
		t.Fatalf("PV %s: source %+v, annotations %v; want local %s provisioned by ray-local/local-path", pv.Name, pv.Spec.PersistentVolumeSource, pv.Annotations, dir)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "nested", "dir", "g")); err != nil || string(b) != "sub\n" {
		t.Errorf("subPath file on the host: %q, %v", b, err)
	}
	deleteAndWait(t, c, "writer")
	runToCompletion(t, c, claimPod("reader", "data", "cat /data/f /sub/g"))
	if logs := kubeletLogs(t, c, "reader", "main"); logs != "kept\nsub\n" {
		t.Errorf("reader logs = %q, want what the writer wrote", logs)
	}
	deleteAndWait(t, c, "reader")
	if err := c.cs.CoreV1().PersistentVolumeClaims(namespace).Delete(ctx, "data", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		_, err := c.cs.CoreV1().PersistentVolumes().Get(ctx, pv.Name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		t.Fatalf("PV %s was not deleted with its claim: %v", pv.Name, err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the volume's directory %s is still there: %v", dir, err)
	}
}

// testUnboundClaim: a pod placed on the node directly whose claim is not
// bound waits in ContainerCreating with a FailedMount event that says so.
func testUnboundClaim(t *testing.T, c *cluster) {
	_, err := c.cs.CoreV1().PersistentVolumeClaims(namespace).Create(t.Context(), claim("unbound", ptr.To("no-such-class")), metav1.CreateOptions{})
	mustCreate(t, err)
	pod := claimPod("unbound", "unbound", "true")
	pod.Spec.NodeName = "ray-local"
	createAndWait(t, c, pod, "ContainerCreating", func(p *corev1.Pod) bool {
		for _, s := range p.Status.ContainerStatuses {
			if s.State.Waiting != nil && s.State.Waiting.Reason == "ContainerCreating" {
				return true
			}
		}
		return false
	})
	waitEvent(t, c, "unbound", "FailedMount",
		`MountVolume.SetUp failed for volume "data" : persistentvolumeclaim "unbound" is not bound yet (phase "Pending"): waiting for a persistent volume`)
	deleteAndWait(t, c, "unbound")
	if err := c.cs.CoreV1().PersistentVolumeClaims(namespace).Delete(t.Context(), "unbound", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
}

// testHostPersistentVolume: a PersistentVolume someone made by hand for a
// host path (here /etc, with the provisioner's annotation to boot) is bound
// to its claim, but the node does not mount it: the pod waits with a
// FailedMount event that says why.
func testHostPersistentVolume(t *testing.T, c *cluster) {
	ctx := t.Context()
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "host-etc", Annotations: map[string]string{"pv.kubernetes.io/provisioned-by": "ray-local/local-path"}},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("64Mi")},
			AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
			StorageClassName:              "manual",
			PersistentVolumeSource:        corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: "/etc"}},
			NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchExpressions: []corev1.NodeSelectorRequirement{{Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpIn, Values: []string{"ray-local"}}},
			}}}},
		},
	}
	_, err := c.cs.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{})
	mustCreate(t, err)
	pvc := claim("host-etc", ptr.To("manual"))
	pvc.Spec.VolumeName = "host-etc"
	_, err = c.cs.CoreV1().PersistentVolumeClaims(namespace).Create(ctx, pvc, metav1.CreateOptions{})
	mustCreate(t, err)
	volumes, err := filepath.EvalSymlinks(c.volumes)
	if err != nil {
		t.Fatal(err)
	}
	createAndWait(t, c, claimPod("host-etc", "host-etc", "cat /data/passwd"), "scheduled", func(p *corev1.Pod) bool { return p.Spec.NodeName != "" })
	waitEvent(t, c, "host-etc", "FailedMount", `MountVolume.SetUp failed for volume "data" : PersistentVolumeForbidden: persistent volume "host-etc" (/etc) `+
		`is neither under the node's volume directory (`+volumes+`) nor under a directory the node shares (--shared-host-dirs: `+c.shared+`)`)
	if got, err := c.cs.CoreV1().Pods(namespace).Get(ctx, "host-etc", metav1.GetOptions{}); err != nil || got.Status.Phase != corev1.PodPending {
		t.Errorf("pod host-etc: %v, phase %v; want Pending", err, got.Status.Phase)
	}
	deleteAndWait(t, c, "host-etc")
	if err := c.cs.CoreV1().PersistentVolumeClaims(namespace).Delete(ctx, "host-etc", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := c.cs.CoreV1().PersistentVolumes().Delete(ctx, "host-etc", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
}

// fillScript writes to /data without end as uid 1000, then says how dd
// ended, how much it wrote and who owns the volume's root.
const fillScript = `
if dd if=/dev/zero of=/data/big bs=1M 2>/tmp/err; then echo "dd=ended"; else echo "dd=$(grep -o 'No space left on device' /tmp/err)"; fi
echo "written=$(stat -c %s /data/big)"
echo "owner=$(stat -c %u:%g /data)"
`

// testPersistentVolumeCapacity: a pod (uid 1000, fsGroup 2000) that writes
// without end to a 32 MiB claim gets ENOSPC within the 32 MiB, and the
// volume's file takes no more than that of the host's disk; the next pod
// finds the file, frees the space and writes again; growing the claim is
// refused (the default class does not allow expansion); deleting the
// claim unmounts the filesystem and removes its directory and file.
func testPersistentVolumeCapacity(t *testing.T, c *cluster) {
	ctx := t.Context()
	pvc := claim("full", nil)
	pvc.Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse("32Mi")
	_, err := c.cs.CoreV1().PersistentVolumeClaims(namespace).Create(ctx, pvc, metav1.CreateOptions{})
	mustCreate(t, err)
	filler := claimPod("filler", "full", fillScript)
	filler.Spec.SecurityContext = &corev1.PodSecurityContext{RunAsUser: ptr.To[int64](1000), RunAsGroup: ptr.To[int64](100), FSGroup: ptr.To[int64](2000)}
	runToCompletion(t, c, filler)
	got := parseLines(kubeletLogs(t, c, "filler", "main"))
	written, _ := strconv.ParseInt(got["written"], 10, 64)
	if got["dd"] != "No space left on device" || written > 32<<20 || written < 16<<20 || got["owner"] != "0:2000" {
		t.Errorf("filling the claim: %v; want ENOSPC after 16-32 MiB, the root owned by 0:2000", got)
	}
	pvc, err = c.cs.CoreV1().PersistentVolumeClaims(namespace).Get(ctx, "full", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(c.volumes, pvc.Spec.VolumeName)
	image := filepath.Join(c.volumes+"-images", pvc.Spec.VolumeName+".ext4")
	var st unix.Stat_t
	if err := unix.Stat(image, &st); err != nil || st.Blocks*512 > 32<<20 {
		t.Errorf("the volume's file on the host: %d bytes allocated (%v), want at most 32 MiB", st.Blocks*512, err)
	}
	t.Logf("a 32 MiB claim took %d bytes before ENOSPC; its file takes %d bytes of the host's disk", written, st.Blocks*512)
	deleteAndWait(t, c, "filler")
	runToCompletion(t, c, claimPod("refiller", "full", `stat -c %s /data/big && rm /data/big && echo again > /data/f && cat /data/f`))
	if logs := kubeletLogs(t, c, "refiller", "main"); logs != got["written"]+"\nagain\n" {
		t.Errorf("the next pod printed %q, want the size the filler wrote, then again", logs)
	}
	deleteAndWait(t, c, "refiller")
	pvc.Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse("64Mi")
	if _, err := c.cs.CoreV1().PersistentVolumeClaims(namespace).Update(ctx, pvc, metav1.UpdateOptions{}); err == nil || !strings.Contains(err.Error(), "must support resize") {
		t.Errorf("growing the claim: %v, want it refused: the class does not allow expansion", err)
	}
	if err := c.cs.CoreV1().PersistentVolumeClaims(namespace).Delete(ctx, "full", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		_, err := c.cs.CoreV1().PersistentVolumes().Get(ctx, pvc.Spec.VolumeName, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		t.Fatalf("PV %s was not deleted with its claim: %v", pvc.Spec.VolumeName, err)
	}
	for _, gone := range []string{dir, image} {
		if _, err := os.Stat(gone); !os.IsNotExist(err) {
			t.Errorf("%s is still there after the PV's deletion: %v", gone, err)
		}
	}
}
