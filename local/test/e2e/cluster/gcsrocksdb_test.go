package cluster_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/local/internal/e2eutil"
)

// TestGCSFaultToleranceRocksDB: the embedded-storage sample, with no Redis
// anywhere. The head's GCS keeps its tables in RocksDB on the cluster's
// gcs-pvc, provisioned by the local cluster's default StorageClass: the
// store's files appear in the volume's directory. A detached actor created
// before the head Pod is deleted answers with its state once the new head
// has recovered the cluster from the volume (whose store the new GCS
// reopened: RocksDB wrote a new MANIFEST or OPTIONS file), and the worker
// it lives on kept running. Deleting the RayCluster deletes the claim, its PV and the
// directory.
func TestGCSFaultToleranceRocksDB(t *testing.T) {
	began := time.Now()
	ns := shared.namespace(t)
	rc := shared.applySample(t, ns, "ray-cluster.embedded-gcs-ft.yaml").(*rayv1.RayCluster)
	ctx, cancel := context.WithTimeout(t.Context(), 4*gcsFTTimeout)
	defer cancel()
	head := shared.waitHead(ctx, t, ns, rc.Name, "")
	checkNoRedis(ctx, t, ns, head)
	worker := shared.workerPod(ctx, t, ns, rc.Name)
	out, err := shared.rayPython(ctx, ns, head, e2eutil.CreateCounter)
	if err != nil || !strings.Contains(out, "count 1") {
		t.Fatalf("creating the detached actor: %v\n%s", err, out)
	}
	pv, dir := shared.claimVolume(ctx, t, ns, rc.Name+"-gcs-pvc")
	store := storeFiles(t, dir, "CURRENT", "MANIFEST-", "OPTIONS-")
	if len(store) < 3 {
		t.Fatalf("no RocksDB store in the GCS volume %s: found %v", dir, store)
	}
	t.Logf("cluster up, actor created after %v; RocksDB files in %s: %v", time.Since(began).Round(time.Second), dir, store)

	shared.deletePod(ctx, t, ns, head)
	newHead := shared.waitHead(ctx, t, ns, rc.Name, head)
	out = shared.retryPython(ctx, t, ns, newHead, e2eutil.ReadCounter)
	if !strings.Contains(out, "count 1") {
		t.Fatalf("the detached actor lost its state across the head's restart:\n%s", out)
	}
	if w := shared.workerPod(ctx, t, ns, rc.Name); w.UID != worker.UID || restarts(w) != restarts(worker) {
		t.Fatalf("the worker did not keep running while the head was replaced: was %s (%d restarts), now %s (%d restarts)",
			worker.UID, restarts(worker), w.UID, restarts(w))
	}
	reopened := storeFiles(t, dir, "MANIFEST-", "OPTIONS-")
	if fresh := newFiles(reopened, store); len(fresh) == 0 {
		t.Fatalf("the new head's GCS did not open the store in %s: files before %v, after %v", dir, store, reopened)
	}
	t.Logf("new head %s answered after %v; its GCS reopened the store: %v", newHead, time.Since(began).Round(time.Second), newFiles(reopened, store))

	if err := shared.Client.Delete(ctx, rc); err != nil {
		t.Fatal(err)
	}
	shared.waitVolumeGone(ctx, t, pv.Name, dir)
	t.Logf("done in %v", time.Since(began).Round(time.Second))
}

// newFiles lists the files of now that before did not have.
func newFiles(now, before []string) []string {
	var out []string
	for _, f := range now {
		if !slices.Contains(before, f) {
			out = append(out, f)
		}
	}
	return out
}

// checkNoRedis: the head runs the GCS on RocksDB and knows no Redis, and
// the namespace runs no Redis.
func checkNoRedis(ctx context.Context, t *testing.T, ns, head string) {
	t.Helper()
	pod := &corev1.Pod{}
	if err := shared.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: head}, pod); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	for _, e := range pod.Spec.Containers[0].Env {
		env[e.Name] = e.Value
		if strings.Contains(strings.ToUpper(e.Name), "REDIS") {
			t.Errorf("the head has Redis setting %s=%q", e.Name, e.Value)
		}
	}
	if env["RAY_gcs_storage"] != "rocksdb" {
		t.Errorf("the head's RAY_gcs_storage = %q, want rocksdb", env["RAY_gcs_storage"])
	}
	pods := &corev1.PodList{}
	if err := shared.Client.List(ctx, pods, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		for _, c := range p.Spec.Containers {
			if strings.Contains(c.Image, "redis") {
				t.Errorf("pod %s runs %s", p.Name, c.Image)
			}
		}
	}
}

// TestGCSStorageRetain: with deletionPolicy Retain the operator's claim is
// not owned by the RayCluster, so deleting the cluster (all of its Pods
// gone) leaves the claim.
func TestGCSStorageRetain(t *testing.T) {
	ns := shared.namespace(t)
	sample, err := os.ReadFile(filepath.Join(shared.Root, "config", "samples", "ray-cluster.embedded-gcs-ft.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	manifest := strings.Replace(string(sample), "# deletionPolicy: Retain", "deletionPolicy: Retain", 1)
	if manifest == string(sample) {
		t.Fatal("the sample no longer shows deletionPolicy: Retain")
	}
	rc := shared.applyManifest(t, ns, "the embedded-storage sample with Retain", []byte(manifest)).(*rayv1.RayCluster)
	ctx, cancel := context.WithTimeout(t.Context(), 2*gcsFTTimeout)
	defer cancel()
	key := types.NamespacedName{Namespace: ns, Name: rc.Name + "-gcs-pvc"}
	claim := &corev1.PersistentVolumeClaim{}
	err = poll(ctx, func() (bool, error) {
		err := shared.Client.Get(ctx, key, claim)
		return err == nil, err
	})
	if err != nil {
		t.Fatalf("the operator did not create claim %s: %v", key.Name, err)
	}
	if owner := metav1.GetControllerOf(claim); owner != nil {
		t.Fatalf("claim %s is owned by %s %s under Retain", key.Name, owner.Kind, owner.Name)
	}
	if err := shared.Client.Delete(ctx, rc); err != nil {
		t.Fatal(err)
	}
	err = poll(ctx, func() (bool, error) {
		err := shared.Client.Get(ctx, client.ObjectKeyFromObject(rc), &rayv1.RayCluster{})
		if !apierrors.IsNotFound(err) {
			return false, err
		}
		pods, err := shared.rayPods(ctx, ns, rc.Name, "head")
		return err == nil && len(pods) == 0, err
	})
	if err != nil {
		t.Fatalf("RayCluster %s is not gone: %v", rc.Name, err)
	}
	if err := shared.Client.Get(ctx, key, claim); err != nil || claim.DeletionTimestamp != nil {
		t.Fatalf("claim %s after the RayCluster was deleted under Retain: %v (deleting: %v)", key.Name, err, claim.DeletionTimestamp)
	}
}
