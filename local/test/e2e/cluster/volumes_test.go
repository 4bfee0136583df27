package cluster_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/moby/sys/mountinfo"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// claimAndWriter is a claim of the default StorageClass and a pod that
// writes to it.
const claimAndWriter = `
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: data
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 64Mi}}
---
apiVersion: v1
kind: Pod
metadata:
  name: writer
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 2
  containers:
    - name: main
      image: rayproject/ray:2.60.0
      command: ["sh", "-c", "echo persisted > /data/greeting"]
      volumeMounts: [{name: data, mountPath: /data}]
  volumes:
    - name: data
      persistentVolumeClaim: {claimName: data}
`

// reader reads what the writer left in the claim.
const reader = `
apiVersion: v1
kind: Pod
metadata:
  name: reader
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 2
  containers:
    - name: main
      image: rayproject/ray:2.60.0
      command: ["cat", "/data/greeting"]
      volumeMounts: [{name: data, mountPath: /data, readOnly: true}]
  volumes:
    - name: data
      persistentVolumeClaim: {claimName: data}
`

const volumeTimeout = 2 * time.Minute

// TestPersistentVolumeClaim: a claim without a class gets the local
// cluster's default StorageClass; a pod writes to it, is deleted, and the
// next pod reads the file back; deleting the claim deletes its PV and the
// directory under the cluster's state directory.
func TestPersistentVolumeClaim(t *testing.T) {
	ns := shared.namespace(t)
	ctx, cancel := context.WithTimeout(t.Context(), 3*volumeTimeout)
	defer cancel()
	shared.applyManifest(t, ns, "claimAndWriter", []byte(claimAndWriter))
	shared.waitPodPhase(ctx, t, ns, "writer", corev1.PodSucceeded)
	pv, dir := shared.claimVolume(ctx, t, ns, "data")
	if pv.Spec.StorageClassName != "standard" {
		t.Errorf("PV %s has class %q, want the default standard", pv.Name, pv.Spec.StorageClassName)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "greeting")); err != nil || string(b) != "persisted\n" {
		t.Errorf("the file on the host: %q, %v", b, err)
	}
	shared.deletePod(ctx, t, ns, "writer")
	shared.applyManifest(t, ns, "reader", []byte(reader))
	shared.waitPodPhase(ctx, t, ns, "reader", corev1.PodSucceeded)
	if out := shared.logs(ctx, ns, "reader", "main", nil); out != "persisted\n" {
		t.Fatalf("the reader printed %q, want what the writer wrote", out)
	}
	shared.deletePod(ctx, t, ns, "reader")
	claim := &corev1.PersistentVolumeClaim{}
	claim.Namespace, claim.Name = ns, "data"
	if err := shared.Client.Delete(ctx, claim); err != nil {
		t.Fatal(err)
	}
	shared.waitVolumeGone(ctx, t, pv.Name, dir)
}

// TestPersistentVolumeAcrossNodeRestart: the node process is killed and
// started again between the writer and the reader of a claim; the claim's
// filesystem stays mounted once (the new node finds it mounted) and the
// reader reads what the writer wrote.
func TestPersistentVolumeAcrossNodeRestart(t *testing.T) {
	ns := shared.namespace(t)
	ctx, cancel := context.WithTimeout(t.Context(), 3*volumeTimeout)
	defer cancel()
	shared.applyManifest(t, ns, "claimAndWriter", []byte(claimAndWriter))
	shared.waitPodPhase(ctx, t, ns, "writer", corev1.PodSucceeded)
	_, dir := shared.claimVolume(ctx, t, ns, "data")
	shared.deletePod(ctx, t, ns, "writer")
	if err := shared.Cluster.RestartNode(ctx); err != nil {
		t.Fatalf("RestartNode: %v", err)
	}
	if n := mountsOn(t, dir); n != 1 {
		t.Errorf("after the node's restart %s is mounted %d times, want once", dir, n)
	}
	shared.applyManifest(t, ns, "reader", []byte(reader))
	shared.waitPodPhase(ctx, t, ns, "reader", corev1.PodSucceeded)
	if out := shared.logs(ctx, ns, "reader", "main", nil); out != "persisted\n" {
		t.Errorf("the reader printed %q after the node's restart, want what the writer wrote", out)
	}
}

// mountsOn counts the mounts on dir in the host's mount table.
func mountsOn(t *testing.T, dir string) int {
	t.Helper()
	mounts, err := mountinfo.GetMounts(mountinfo.SingleEntryFilter(dir))
	if err != nil {
		t.Fatal(err)
	}
	return len(mounts)
}

// waitPodPhase waits until the pod reaches phase (and fails on the other
// terminal phase).
func (s *suite) waitPodPhase(ctx context.Context, t *testing.T, ns, name string, phase corev1.PodPhase) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, volumeTimeout)
	defer cancel()
	pod := &corev1.Pod{}
	err := poll(ctx, func() (bool, error) {
		if err := s.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, pod); err != nil {
			return false, err
		}
		if pod.Status.Phase == corev1.PodFailed || pod.Status.Phase == corev1.PodSucceeded {
			return true, nil
		}
		return false, fmt.Errorf("phase %s", pod.Status.Phase)
	})
	if err != nil || pod.Status.Phase != phase {
		s.dump(ctx, t, ns)
		t.Fatalf("pod %s: %v, phase %s, want %s; logs %q", name, err, pod.Status.Phase, phase, s.logs(ctx, ns, name, "main", nil))
	}
}

// claimVolume returns the PV bound to a claim and its directory on the
// host, which must lie in the cluster's volume directory.
func (s *suite) claimVolume(ctx context.Context, t *testing.T, ns, claim string) (*corev1.PersistentVolume, string) {
	t.Helper()
	pvc := &corev1.PersistentVolumeClaim{}
	if err := s.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: claim}, pvc); err != nil {
		t.Fatal(err)
	}
	pv := &corev1.PersistentVolume{}
	if err := s.Client.Get(ctx, types.NamespacedName{Name: pvc.Spec.VolumeName}, pv); err != nil {
		t.Fatalf("claim %s (phase %s): %v", claim, pvc.Status.Phase, err)
	}
	want := filepath.Join(s.StateDir, "volumes", pv.Name)
	if pv.Spec.Local == nil || pv.Spec.Local.Path != want {
		t.Fatalf("PV %s: source %+v, want a local volume at %s", pv.Name, pv.Spec.PersistentVolumeSource, want)
	}
	return pv, want
}

// waitVolumeGone waits until the PV is deleted, then checks that its
// directory went first.
func (s *suite) waitVolumeGone(ctx context.Context, t *testing.T, pv, dir string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, volumeTimeout)
	defer cancel()
	err := poll(ctx, func() (bool, error) {
		err := s.Client.Get(ctx, client.ObjectKey{Name: pv}, &corev1.PersistentVolume{})
		return apierrors.IsNotFound(err), err
	})
	if err != nil {
		t.Fatalf("PV %s was not deleted: %v", pv, err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		entries, _ := os.ReadDir(dir)
		t.Fatalf("PV %s is gone but its directory %s is still there (%d entries): %v", pv, dir, len(entries), err)
	}
}

// storeFiles lists the files below dir whose names start with one of
// prefixes.
func storeFiles(t *testing.T, dir string, prefixes ...string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		for _, pre := range prefixes {
			if !d.IsDir() && strings.HasPrefix(d.Name(), pre) {
				rel, _ := filepath.Rel(dir, p)
				out = append(out, rel)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
