package rayjob

import (
	"context"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/managerdeps"
)

// TestReleasingAsksTheAPIServer: a cache that has not seen the cluster and
// the submitter Job yet (a RayJob suspended, or failed, right after its
// cluster was created) does not make Suspending or Retrying think they are
// gone: they are deleted and the RayJob waits. Believing the cache, the
// RayJob forgot the cluster's name, left it running and created another
// for the next attempt: two clusters at once, found by the chaos suite
// (test/integration/rayjobchaos).
func TestReleasingAsksTheAPIServer(t *testing.T) {
	for _, state := range []rayv1.JobDeploymentStatus{rayv1.JobDeploymentStatusSuspending, rayv1.JobDeploymentStatusRetrying} {
		t.Run(string(state), func(t *testing.T) {
			job := makeJob(inState(state), func(j *rayv1.RayJob) {
				j.Spec.Suspend, j.Spec.ShutdownAfterJobFinishes = state == rayv1.JobDeploymentStatusSuspending, true
				j.Spec.BackoffLimit, j.Status.Failed = ptr.To[int32](2), ptr.To[int32](1)
			})
			e := newEnv(t, []client.Object{job, makeCluster(""), submitterJob("", t0)})
			// The reconciler's cache has seen neither; the API server (its
			// live reader) has both.
			notCachedYet := interceptor.Funcs{Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
				switch obj.(type) {
				case *rayv1.RayCluster, *batchv1.Job:
					return apierrors.NewNotFound(schema.GroupResource{}, key.Name)
				}
				return c.Get(ctx, key, obj, opts...)
			}}
			api := e.client.(client.WithWatch)
			e.r = New(Deps{
				Core: managerdeps.Core{Client: interceptor.NewClient(api, notCachedYet), LiveReader: api, Recorder: e.events, Clock: e.clock}, Dashboards: e.dash.Provider()}, e.opts)
			if _, err := e.reconcile(t); err != nil {
				t.Fatal(err)
			}
			got := e.job(t)
			if got.Status.JobDeploymentStatus != state || got.Status.RayClusterName != testCluster {
				t.Errorf("status %q cluster %q, want %q still on %q", got.Status.JobDeploymentStatus, got.Status.RayClusterName, state, testCluster)
			}
			if e.exists(t, makeCluster("")) || e.exists(t, submitterJob("", t0)) {
				t.Error("the cluster or the submitter Job the cache had not seen was left running")
			}
		})
	}
}
