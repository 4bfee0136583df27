package rayservice

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/testing/wrappers"
)

// TestWatchMappings checks which RayService an event of a watched object
// that the RayService does not own brings a pass to: EndpointSlices by the
// labels they mirror from their Service, head Pods through their cluster.
func TestWatchMappings(t *testing.T) {
	rs := rayService().Obj()
	owned := clusterOf(t, rs, active).Obj()
	unowned := wrappers.MakeRayCluster("standalone", testNS).Obj()
	jobCluster := wrappers.MakeRayCluster("job-cluster", testNS).OwnedBy(rs, rayv1.KindRayJob).Obj()
	e := newEnv(t, []client.Object{rs, owned, unowned, jobCluster})
	want := []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: testNS, Name: testName}}}
	slice := func(labels map[string]string) client.Object {
		w := wrappers.MakeEndpointSlice("slice", testNS, "whatever")
		for k, v := range labels {
			w.Labels[k] = v
		}
		return w.Obj()
	}
	origin := func(name, kind string) map[string]string {
		return map[string]string{rayv1.LabelOriginatedFromCRName: name, rayv1.LabelOriginatedFromCRD: kind}
	}
	cases := map[string]struct {
		obj  client.Object
		head bool
		want []reconcile.Request
	}{
		"a slice of the RayService's serve Service": {obj: slice(origin(testName, rayv1.KindRayService)), want: want},
		"a slice of a per-cluster serve Service, named after the cluster": {
			obj: slice(origin(active, rayv1.KindRayService)), want: want,
		},
		"a slice of a RayJob's Service":               {obj: slice(origin(testName, rayv1.KindRayJob))},
		"a slice of another Service":                  {obj: slice(nil)},
		"the head Pod of a cluster of the RayService": {obj: wrappers.MakeHeadPod(active, testNS).Obj(), head: true, want: want},
		"a worker Pod of that cluster": {
			obj:  wrappers.MakePod("w", testNS).Label(rayv1.LabelCluster, active).Label(rayv1.LabelNodeType, string(rayv1.WorkerNode)).Obj(),
			head: true,
		},
		"the head Pod of a standalone cluster": {obj: wrappers.MakeHeadPod("standalone", testNS).Obj(), head: true},
		"the head Pod of a RayJob's cluster":   {obj: wrappers.MakeHeadPod("job-cluster", testNS).Obj(), head: true},
		"the head Pod of a cluster gone":       {obj: wrappers.MakeHeadPod("gone", testNS).Obj(), head: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got []reconcile.Request
			if tc.head {
				got = e.r.rayServiceOfHeadPod(context.Background(), tc.obj)
			} else {
				got = e.r.rayServiceOfLabels(context.Background(), tc.obj)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
		})
	}
}
