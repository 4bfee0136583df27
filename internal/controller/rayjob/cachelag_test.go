package rayjob

import (
	"context"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// laggingCache is a client whose reads of one RayJob return it as it was
// at a moment the informer cache has not moved past; everything else, and
// every write, goes to the API.
type laggingCache struct {
	client.Client
	stale *rayv1.RayJob
}

func (c laggingCache) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if job, ok := obj.(*rayv1.RayJob); ok && key == client.ObjectKeyFromObject(c.stale) {
		c.stale.DeepCopyInto(job)
		return nil
	}
	return c.Client.Get(ctx, key, obj, opts...)
}

// TestPassOverAVersionItReplacedLeavesTheJobAlone: a pass that reads the
// RayJob as it was before the controller's own writes ends without an
// error and without a write (it used to fail with a conflict), and the pass
// after the cache caught up goes on from what the first pass wrote.
func TestPassOverAVersionItReplacedLeavesTheJobAlone(t *testing.T) {
	e := newEnv(t, []client.Object{makeJob()})
	before := e.job(t)
	if _, err := e.reconcile(t); err != nil {
		t.Fatal(err)
	}
	written := e.job(t)
	if written.Status.JobDeploymentStatus != rayv1.JobDeploymentStatusInitializing || written.Status.RayClusterName == "" {
		t.Fatalf("first pass left %q with cluster %q, want Initializing with a cluster name",
			written.Status.JobDeploymentStatus, written.Status.RayClusterName)
	}

	api := e.r.Client
	e.r.Client = laggingCache{Client: api, stale: before}
	if _, err := e.reconcile(t); err != nil {
		t.Fatalf("pass over the replaced version: %v", err)
	}
	if got := e.job(t); got.ResourceVersion != written.ResourceVersion {
		t.Fatalf("the RayJob changed from version %s to %s in a pass over the replaced version %s (cluster %q, was %q)",
			written.ResourceVersion, got.ResourceVersion, before.ResourceVersion, got.Status.RayClusterName, written.Status.RayClusterName)
	}

	e.r.Client = api
	if _, err := e.reconcile(t); err != nil {
		t.Fatal(err)
	}
	cluster := &rayv1.RayCluster{}
	cluster.Namespace, cluster.Name = testNS, written.Status.RayClusterName
	if !e.exists(t, cluster) {
		t.Fatalf("RayCluster %s not created once the cache caught up", written.Status.RayClusterName)
	}
}
