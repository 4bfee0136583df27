package node_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
)

// testSwappedHostPaths: two pods are admitted with hostPath volumes in a
// writable shared directory, and wait for a claim before their volumes are
// set up. Meanwhile a third pod sharing the directory puts symlinks to a
// host directory in their paths: one above where a volume will be created
// (DirectoryOrCreate), one in place of the other's directory. Once
// the claim is bound, the node re-checks the paths and refuses both
// volumes: it creates nothing on the host, and no pod reads it.
func testSwappedHostPaths(t *testing.T, c *cluster) {
	ctx := t.Context()
	host := t.TempDir() // stands in for /etc
	if err := os.WriteFile(filepath.Join(host, "secret"), []byte("host\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rw := filepath.Join(c.shared, "rw")
	for _, d := range []string{rw, filepath.Join(rw, "data")} {
		if err := os.Mkdir(d, 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(d, 0o777); err != nil {
			t.Fatal(err)
		}
	}
	_, err := c.cs.CoreV1().PersistentVolumeClaims(namespace).Create(ctx, laterClaim(), metav1.CreateOptions{})
	mustCreate(t, err)
	victim := func(name, volume, path string, typ corev1.HostPathType) *corev1.Pod {
		pod := sleepPod(name, "cat /v/secret; ls /v")
		pod.Spec.NodeName = "ray-local"
		pod.Spec.RestartPolicy = corev1.RestartPolicyNever
		pod.Spec.Volumes = []corev1.Volume{
			{Name: "later", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "later"}}},
			{Name: volume, VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: path, Type: ptr.To(typ)}}},
		}
		pod.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: volume, MountPath: "/v"}}
		return pod
	}
	waitingForClaim := func(p *corev1.Pod) bool {
		return p.Status.Phase == corev1.PodPending && len(p.Status.ContainerStatuses) > 0
	}
	createAndWait(t, c, victim("made", "made", rw+"/new/deeper", corev1.HostPathDirectoryOrCreate), "waiting for its claim", waitingForClaim)
	createAndWait(t, c, victim("swapped", "data", rw+"/data", corev1.HostPathDirectory), "waiting for its claim", waitingForClaim)

	attacker := sleepPod("attacker", "ln -s "+host+" /rw/new && mv /rw/data /rw/data.old && ln -s "+host+" /rw/data")
	attacker.Spec.RestartPolicy = corev1.RestartPolicyNever
	attacker.Spec.Volumes = []corev1.Volume{{Name: "rw", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: rw}}}}
	attacker.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "rw", MountPath: "/rw"}}
	runToCompletion(t, c, attacker)

	_, err = c.cs.CoreV1().PersistentVolumes().Create(ctx, laterVolume(c.shared), metav1.CreateOptions{})
	mustCreate(t, err)
	for pod, vol := range map[string]struct{ name, path, resolved string }{
		"made":    {"made", rw + "/new/deeper", host + "/deeper"},
		"swapped": {"data", rw + "/data", host},
	} {
		refusal := `MountVolume.SetUp failed for volume "` + vol.name + `" : hostPath volume "` + vol.name + `" (` + vol.path + `, resolved ` +
			vol.resolved + `) is not under a directory the node shares (--shared-host-dirs: ` + c.shared + `)`
		if ran := refusedOrRan(t, c, pod, refusal); ran != nil {
			t.Errorf("pod %s ran with a volume on the host: phase %s, logs %q", pod, ran.Status.Phase, kubeletLogs(t, c, pod, "main"))
		}
	}
	entries, err := os.ReadDir(host)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{"secret"}) {
		t.Errorf("the host directory holds %v; want only [secret]", names)
	}
	deleteAndWait(t, c, "made", "swapped", "attacker")
	if err := c.cs.CoreV1().PersistentVolumeClaims(namespace).Delete(ctx, "later", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := c.cs.CoreV1().PersistentVolumes().Delete(ctx, "later", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
}

// laterClaim is a claim of a class nothing provisions, for the volume
// "later" that does not exist yet.
func laterClaim() *corev1.PersistentVolumeClaim {
	pvc := claim("later", ptr.To("manual"))
	pvc.Spec.VolumeName = "later"
	return pvc
}

// laterVolume is the volume laterClaim waits for, in the shared directory.
func laterVolume(shared string) *corev1.PersistentVolume {
	return &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "later"},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("64Mi")},
			AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
			StorageClassName:              "manual",
			PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{
				Path: filepath.Join(shared, "later"), Type: ptr.To(corev1.HostPathDirectoryOrCreate)}},
			ClaimRef: &corev1.ObjectReference{Namespace: namespace, Name: "later"},
		},
	}
}

// refusedOrRan waits until pod has a FailedMount event with message, and
// returns nil, or until it leaves Pending, and returns it.
func refusedOrRan(t *testing.T, c *cluster, pod, message string) *corev1.Pod {
	t.Helper()
	var ran *corev1.Pod
	var seen []string
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		p, err := c.cs.CoreV1().Pods(namespace).Get(ctx, pod, metav1.GetOptions{})
		if err == nil && p.Status.Phase != corev1.PodPending {
			ran = p
			return true, nil
		}
		evs, err := c.cs.CoreV1().Events(namespace).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.kind=Pod,involvedObject.name=" + pod})
		if err != nil {
			return false, nil
		}
		seen = seen[:0]
		for _, ev := range evs.Items {
			seen = append(seen, ev.Reason+" "+ev.Message)
		}
		return slices.Contains(seen, "FailedMount "+message), nil
	})
	if err != nil {
		t.Errorf("pod %s: neither refused with %q nor running; events: %q", pod, message, seen)
	}
	return ran
}
