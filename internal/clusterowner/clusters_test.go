package clusterowner

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/eventrecord"
	"github.com/ray-operator/ray-operator/internal/rayservices"
)

func testScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := rayv1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return s
}

func testOwner() *rayv1.RayService {
	return &rayv1.RayService{ObjectMeta: metav1.ObjectMeta{
		Name: "svc", Namespace: "ns", UID: "uid-1",
		Labels:      map[string]string{"team": "a"},
		Annotations: map[string]string{"note": "x"},
	}}
}

// recorded drains the events a FakeRecorder holds.
func recorded(r *events.FakeRecorder) []string {
	var out []string
	for {
		select {
		case e := <-r.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

func TestBuild(t *testing.T) {
	owner := testOwner()
	spec := hashSpec("a")
	got := Build(owner, rayv1.KindRayService, "svc-abcde", spec)
	want := &rayv1.RayCluster{
		ObjectMeta: metav1.ObjectMeta{
			Name: "svc-abcde", Namespace: "ns",
			Labels:      map[string]string{"team": "a", rayv1.LabelOriginatedFromCRName: "svc", rayv1.LabelOriginatedFromCRD: "RayService"},
			Annotations: map[string]string{"note": "x"},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "ray.io/v1", Kind: "RayService", Name: "svc", UID: "uid-1",
				Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
			}},
		},
		Spec: *spec,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Build (-want +got):\n%s", diff)
	}
	got.Labels["team"] = "b"
	got.Spec.WorkerGroupSpecs[0].GroupName = "changed"
	if owner.Labels["team"] != "a" || spec.WorkerGroupSpecs[0].GroupName != "a" {
		t.Error("Build shares maps or the spec with its inputs")
	}
}

func TestClustersCreateGetDelete(t *testing.T) {
	ctx := context.Background()
	owner := testOwner()
	rec := events.NewFakeRecorder(10)
	c := Clusters{Client: fake.NewClientBuilder().WithScheme(testScheme(t)).Build(), Events: eventrecord.New(rec)}
	key := types.NamespacedName{Namespace: "ns", Name: "svc-abcde"}

	if got, err := c.Get(ctx, key); err != nil || got != nil {
		t.Fatalf("Get of a missing cluster = %v, %v; want nil, nil", got, err)
	}
	if err := c.Create(ctx, owner, Build(owner, rayv1.KindRayService, key.Name, hashSpec("a"))); err != nil {
		t.Fatal(err)
	}
	if got, err := c.Get(ctx, key); err != nil || got == nil || got.Labels[rayv1.LabelOriginatedFromCRName] != "svc" {
		t.Fatalf("Get after Create = %v, %v", got, err)
	}
	list, err := c.List(ctx, owner, rayv1.KindRayService)
	if err != nil || len(list) != 1 {
		t.Fatalf("List = %d clusters, %v; want 1", len(list), err)
	}
	if others, _ := c.List(ctx, owner, rayv1.KindRayJob); len(others) != 0 {
		t.Errorf("List by another kind found %d clusters", len(others))
	}
	gone, err := c.Delete(ctx, owner, key)
	if err != nil || gone {
		t.Fatalf("first Delete = %v, %v; want false (deleted now), nil", gone, err)
	}
	if gone, err = c.Delete(ctx, owner, key); err != nil || !gone {
		t.Fatalf("Delete of a deleted cluster = %v, %v; want true, nil", gone, err)
	}
	want := []string{
		"Normal CreatedRayCluster Created RayCluster ns/svc-abcde",
		"Normal DeletedRayCluster Deleted RayCluster ns/svc-abcde",
	}
	if diff := cmp.Diff(want, recorded(rec)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

func TestClustersFailuresAreEvents(t *testing.T) {
	ctx := context.Background()
	owner := testOwner()
	boom := errors.New("boom")
	rec := events.NewFakeRecorder(10)
	existing := Build(owner, rayv1.KindRayService, "svc-old", hashSpec("a"))
	c := Clusters{Events: eventrecord.New(rec), Client: fake.NewClientBuilder().WithScheme(testScheme(t)).WithObjects(existing).
		WithInterceptorFuncs(interceptor.Funcs{
			Create: func(context.Context, client.WithWatch, client.Object, ...client.CreateOption) error { return boom },
			Update: func(context.Context, client.WithWatch, client.Object, ...client.UpdateOption) error { return boom },
			Delete: func(context.Context, client.WithWatch, client.Object, ...client.DeleteOption) error { return boom },
		}).Build()}
	if err := c.Create(ctx, owner, Build(owner, rayv1.KindRayService, "svc-new", hashSpec("a"))); !errors.Is(err, boom) {
		t.Errorf("Create error = %v", err)
	}
	if err := c.Update(ctx, owner, existing); !errors.Is(err, boom) {
		t.Errorf("Update error = %v", err)
	}
	if _, err := c.Delete(ctx, owner, client.ObjectKeyFromObject(existing)); !errors.Is(err, boom) {
		t.Errorf("Delete error = %v", err)
	}
	var reasons []string
	for _, e := range recorded(rec) {
		reasons = append(reasons, strings.Fields(e)[1])
	}
	want := []string{ReasonFailedToCreateRayCluster, ReasonFailedToUpdateRayCluster, ReasonFailedToDeleteRayCluster}
	if diff := cmp.Diff(want, reasons); diff != "" {
		t.Errorf("event reasons (-want +got):\n%s", diff)
	}
}

func TestDeleteWaitsForATerminatingCluster(t *testing.T) {
	ctx := context.Background()
	owner := testOwner()
	cluster := Build(owner, rayv1.KindRayService, "svc-old", hashSpec("a"))
	cluster.Finalizers = []string{"test/keep"}
	cl := fake.NewClientBuilder().WithScheme(testScheme(t)).WithObjects(cluster).Build()
	if err := cl.Delete(ctx, cluster); err != nil {
		t.Fatal(err)
	}
	rec := events.NewFakeRecorder(10)
	gone, err := Clusters{Client: cl, Events: eventrecord.New(rec)}.Delete(ctx, owner, client.ObjectKeyFromObject(cluster))
	if err != nil || gone {
		t.Errorf("Delete of a terminating cluster = %v, %v; want false, nil", gone, err)
	}
	if got := recorded(rec); len(got) != 0 {
		t.Errorf("a terminating cluster was deleted again: %v", got)
	}
}

func clusterNamed(name string) *rayv1.RayCluster {
	return &rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"}, Spec: *hashSpec("a")}
}

func TestApplyServiceSwitchesClustersKeepingTheClusterIP(t *testing.T) {
	ctx := context.Background()
	owner := testOwner()
	rec := events.NewFakeRecorder(10)
	cl := fake.NewClientBuilder().WithScheme(testScheme(t)).Build()
	c := Clusters{Client: cl, Events: eventrecord.New(rec)}
	opts := rayservices.HeadServiceOptions{ClusterIP: true}

	first, err := c.ApplyService(ctx, owner, OwnerHeadService(owner, rayv1.KindRayService, clusterNamed("svc-aaaaa"), opts))
	if err != nil {
		t.Fatal(err)
	}
	// The fake client allocates no ClusterIP; give the stored Service one, as
	// the API server would.
	first.Spec.ClusterIP, first.Spec.ClusterIPs = "10.0.0.7", []string{"10.0.0.7"}
	first.Annotations = map[string]string{"user": "kept"}
	if err := cl.Update(ctx, first); err != nil {
		t.Fatal(err)
	}

	same, err := c.ApplyService(ctx, owner, OwnerHeadService(owner, rayv1.KindRayService, clusterNamed("svc-aaaaa"), opts))
	if err != nil || same.ResourceVersion != first.ResourceVersion {
		t.Fatalf("re-applying for the same cluster wrote the Service (%v)", err)
	}
	moved, err := c.ApplyService(ctx, owner, OwnerHeadService(owner, rayv1.KindRayService, clusterNamed("svc-bbbbb"), opts))
	if err != nil {
		t.Fatal(err)
	}
	stored := &corev1.Service{}
	if err := cl.Get(ctx, client.ObjectKeyFromObject(moved), stored); err != nil {
		t.Fatal(err)
	}
	if got := SelectedCluster(stored); got != "svc-bbbbb" {
		t.Errorf("selector cluster = %q, want svc-bbbbb", got)
	}
	if stored.Spec.ClusterIP != "10.0.0.7" || stored.Annotations["user"] != "kept" {
		t.Errorf("ClusterIP %q, annotations %v: want the allocated IP and the metadata kept", stored.Spec.ClusterIP, stored.Annotations)
	}
	if diff := cmp.Diff([]metav1.OwnerReference{ControllerRef(owner, rayv1.KindRayService)}, stored.OwnerReferences); diff != "" {
		t.Errorf("owner references (-want +got):\n%s", diff)
	}
	want := []string{"Normal CreatedService Created the service ns/svc-head-svc", "Normal UpdatedService Updated the service ns/svc-head-svc"}
	if diff := cmp.Diff(want, recorded(rec)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

func TestApplyServiceCreateFailure(t *testing.T) {
	rec := events.NewFakeRecorder(10)
	cl := fake.NewClientBuilder().WithScheme(testScheme(t)).WithInterceptorFuncs(interceptor.Funcs{
		Create: func(context.Context, client.WithWatch, client.Object, ...client.CreateOption) error {
			return apierrors.NewForbidden(corev1.Resource("services"), "x", errors.New("quota"))
		},
	}).Build()
	owner := testOwner()
	_, err := Clusters{Client: cl, Events: eventrecord.New(rec)}.ApplyService(context.Background(), owner,
		OwnerHeadService(owner, rayv1.KindRayService, clusterNamed("svc-aaaaa"), rayservices.HeadServiceOptions{}))
	if !apierrors.IsForbidden(err) {
		t.Errorf("error = %v, want the Forbidden from the API server", err)
	}
	if got := recorded(rec); len(got) != 1 || !strings.HasPrefix(got[0], "Warning FailedToCreateService") {
		t.Errorf("events = %v, want one FailedToCreateService", got)
	}
}

// TestClustersCreateOfAnExistingCluster: a create that finds the owner's own
// cluster (made by an earlier pass, not cached yet) succeeds quietly with
// the stored cluster; one that finds a stranger's cluster of that name fails
// with the FailedToCreateRayCluster Warning, as before.
func TestClustersCreateOfAnExistingCluster(t *testing.T) {
	ctx := context.Background()
	owner := testOwner()
	own := Build(owner, rayv1.KindRayService, "svc-own", hashSpec("a"))
	own.UID = "cluster-uid"
	stranger := Build(owner, rayv1.KindRayService, "svc-stranger", hashSpec("a"))
	stranger.OwnerReferences[0].UID = "someone-else"
	rec := events.NewFakeRecorder(10)
	api := fake.NewClientBuilder().WithScheme(testScheme(t)).WithObjects(own, stranger).Build()
	c := Clusters{Client: api, Live: api, Events: eventrecord.New(rec)}

	again := Build(owner, rayv1.KindRayService, "svc-own", hashSpec("b"))
	if err := c.Create(ctx, owner, again); err != nil {
		t.Fatalf("Create of the owner's own cluster: %v", err)
	}
	if again.UID != "cluster-uid" || again.Spec.WorkerGroupSpecs[0].GroupName != "a" {
		t.Errorf("Create left uid %q group %q, want the stored cluster's (cluster-uid, a)", again.UID, again.Spec.WorkerGroupSpecs[0].GroupName)
	}
	err := c.Create(ctx, owner, Build(owner, rayv1.KindRayService, "svc-stranger", hashSpec("a")))
	if !apierrors.IsAlreadyExists(err) {
		t.Fatalf("Create over a stranger's cluster: %v, want AlreadyExists", err)
	}
	want := []string{"Warning FailedToCreateRayCluster Failed to create RayCluster ns/svc-stranger: " + errors.Unwrap(err).Error()}
	if diff := cmp.Diff(want, recorded(rec)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}
