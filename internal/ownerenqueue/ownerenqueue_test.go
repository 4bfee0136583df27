package ownerenqueue

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

var rayClusterKind = rayv1.GroupVersion.WithKind("RayCluster")

func ref(apiVersion, kind, name string, controller bool) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: name, UID: types.UID("u-" + name), Controller: &controller}
}

func pod(refs ...metav1.OwnerReference) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", OwnerReferences: refs}}
}

// requests drives h with a create of obj, or an update from old to obj, and
// returns what it enqueued, sorted.
func requests(t *testing.T, h handler.EventHandler, old, obj *corev1.Pod) []string {
	t.Helper()
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer q.ShutDown()
	if old == nil {
		h.Create(t.Context(), event.CreateEvent{Object: obj}, q)
	} else {
		h.Update(t.Context(), event.UpdateEvent{ObjectOld: old, ObjectNew: obj}, q)
	}
	var out []string
	for q.Len() > 0 {
		r, _ := q.Get()
		out = append(out, r.String())
		q.Done(r)
	}
	slices.Sort(out)
	return out
}

// controllerRuntimeHandler is what builder.Owns(&corev1.Pod{}) installs in
// a RayCluster controller.
func controllerRuntimeHandler(tb testing.TB) handler.EventHandler {
	tb.Helper()
	scheme := runtime.NewScheme()
	if err := rayv1.AddToScheme(scheme); err != nil {
		tb.Fatal(err)
	}
	mapper := meta.NewDefaultRESTMapper([]schema.GroupVersion{rayv1.GroupVersion})
	mapper.Add(rayv1.GroupVersion.WithKind("RayCluster"), meta.RESTScopeNamespace)
	return handler.EnqueueRequestForOwner(scheme, mapper, &rayv1.RayCluster{}, handler.OnlyControllerOwner())
}

// TestHandlerMatchesControllerRuntime: for creates and updates of objects
// with every kind of owner reference, Handler enqueues what
// controller-runtime's controller-owner handler does.
func TestHandlerMatchesControllerRuntime(t *testing.T) {
	rc := rayv1.GroupVersion.String()
	cases := map[string]struct {
		old, obj *corev1.Pod
		want     []string
	}{
		"controlled by a RayCluster": {obj: pod(ref(rc, "RayCluster", "a", true)), want: []string{"ns/a"}},
		"owned, not controlled":      {obj: pod(ref(rc, "RayCluster", "a", false))},
		"no owner":                   {obj: pod()},
		"another kind":               {obj: pod(ref(rc, "RayJob", "a", true))},
		"another group":              {obj: pod(ref("example.com/v1", "RayCluster", "a", true))},
		"a version not served":       {obj: pod(ref("ray.io/v1alpha1", "RayCluster", "a", true))},
		"a bad apiVersion":           {obj: pod(ref("a/b/c", "RayCluster", "a", true))},
		"controller among owners": {
			obj:  pod(ref(rc, "RayCluster", "x", false), ref(rc, "RayCluster", "a", true)),
			want: []string{"ns/a"},
		},
		"update to another controller": {
			old:  pod(ref(rc, "RayCluster", "a", true)),
			obj:  pod(ref(rc, "RayCluster", "b", true)),
			want: []string{"ns/a", "ns/b"},
		},
		"update, same controller": {
			old:  pod(ref(rc, "RayCluster", "a", true)),
			obj:  pod(ref(rc, "RayCluster", "a", true)),
			want: []string{"ns/a"},
		},
	}
	theirs := controllerRuntimeHandler(t)
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := requests(t, Handler(rayClusterKind), tc.old, tc.obj)
			if !slices.Equal(got, tc.want) {
				t.Errorf("Handler enqueued %v, want %v", got, tc.want)
			}
			if cr := requests(t, theirs, tc.old, tc.obj); !slices.Equal(got, cr) {
				t.Errorf("Handler enqueued %v, controller-runtime's handler %v", got, cr)
			}
		})
	}
}

// BenchmarkHandler compares one Pod update through Handler and through
// controller-runtime's handler with a static REST mapper (the operator's
// is the dynamic one, whose look-up allocates more).
func BenchmarkHandler(b *testing.B) {
	rc := rayv1.GroupVersion.String()
	old, obj := pod(ref(rc, "RayCluster", "a", true)), pod(ref(rc, "RayCluster", "a", true))
	for name, h := range map[string]handler.EventHandler{"ownerenqueue": Handler(rayClusterKind), "controller-runtime": controllerRuntimeHandler(b)} {
		b.Run(name, func(b *testing.B) {
			q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
			defer q.ShutDown()
			b.ReportAllocs()
			for b.Loop() {
				h.Update(b.Context(), event.UpdateEvent{ObjectOld: old, ObjectNew: obj}, q)
			}
			if !strings.HasSuffix(func() string { r, _ := q.Get(); return r.String() }(), "/a") {
				b.Fatal("nothing enqueued")
			}
		})
	}
}
