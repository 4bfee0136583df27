package kuberneteswas

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/batchscheduler"
	scheduling "github.com/ray-operator/ray-operator/internal/batchscheduler/kuberneteswas/schedulingv1alpha2"
	"github.com/ray-operator/ray-operator/internal/testing/wrappers"
)

var (
	workloadKey = client.ObjectKey{Namespace: "ns", Name: "rc"}
	podGroupKey = client.ObjectKey{Namespace: "ns", Name: "rc-cluster"}
)

// newScheduler returns the Scheduler over a fake client holding objs.
func newScheduler(t *testing.T, objs ...client.Object) (*Scheduler, client.Client) {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := (Factory{}).AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).Build()
	s, err := Factory{}.New(t.Context(), nil, c)
	if err != nil {
		t.Fatal(err)
	}
	return s.(*Scheduler), c
}

// exists reports whether key holds an obj, failing on other errors.
func exists(t *testing.T, c client.Client, key client.ObjectKey, obj client.Object) bool {
	t.Helper()
	err := c.Get(context.Background(), key, obj)
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	return err == nil
}

// foreign makes obj controlled by another RayCluster.
func foreign[T client.Object](obj T) T {
	other := wrappers.MakeRayCluster("other", "ns").Obj()
	other.UID = types.UID("other-uid")
	obj.SetOwnerReferences([]metav1.OwnerReference{*metav1.NewControllerRef(other, rayv1.GroupVersion.WithKind("RayCluster"))})
	return obj
}

func withFinalizers[T client.Object](obj T, finalizers ...string) T {
	obj.SetFinalizers(finalizers)
	return obj
}

func TestSubmissionCreatesWorkloadThenPodGroup(t *testing.T) {
	s, c := newScheduler(t)
	cluster := gangCluster(3).Obj()
	if err := s.DoBatchSchedulingOnSubmission(t.Context(), cluster); err != nil {
		t.Fatal(err)
	}
	w, pg := &scheduling.Workload{}, &scheduling.PodGroup{}
	if !exists(t, c, workloadKey, w) || !exists(t, c, podGroupKey, pg) {
		t.Fatal("Workload or PodGroup missing")
	}
	if diff := cmp.Diff(BuildWorkload(cluster).Spec, w.Spec); diff != "" {
		t.Errorf("Workload spec (-want +got):\n%s", diff)
	}
	if got := pg.Spec.SchedulingPolicy.Gang.MinCount; got != 4 {
		t.Errorf("minCount %d, want 4 (head and 3 workers)", got)
	}
	// Idempotent: a second pass changes nothing.
	if err := s.DoBatchSchedulingOnSubmission(t.Context(), cluster); err != nil {
		t.Fatal(err)
	}
	again := &scheduling.PodGroup{}
	exists(t, c, podGroupKey, again)
	if again.ResourceVersion != pg.ResourceVersion {
		t.Errorf("an unchanged PodGroup was rewritten")
	}
}

// TestSubmissionReplacesStaleObjects: a replica change deletes the
// PodGroup (its protection finalizer removed), then the Workload, each
// ending a pass with a wait, and the next passes make both anew.
func TestSubmissionReplacesStaleObjects(t *testing.T) {
	old := gangCluster(1).Obj()
	s, c := newScheduler(t, BuildWorkload(old), withFinalizers(BuildPodGroup(old), scheduling.PodGroupProtectionFinalizer))
	cluster := gangCluster(3).Obj()
	steps := []struct{ workload, podGroup bool }{{true, false}, {false, false}, {true, true}}
	for i, want := range steps {
		err := s.DoBatchSchedulingOnSubmission(t.Context(), cluster)
		if last := i == len(steps)-1; last != (err == nil) || (!last && !batchscheduler.IsWaiting(err)) {
			t.Fatalf("pass %d: %v", i, err)
		}
		if w, pg := exists(t, c, workloadKey, &scheduling.Workload{}), exists(t, c, podGroupKey, &scheduling.PodGroup{}); w != want.workload || pg != want.podGroup {
			t.Fatalf("pass %d: Workload %v PodGroup %v, want %v %v", i, w, pg, want.workload, want.podGroup)
		}
	}
	pg := &scheduling.PodGroup{}
	exists(t, c, podGroupKey, pg)
	if pg.Spec.SchedulingPolicy.Gang.MinCount != 4 {
		t.Errorf("minCount %d, want 4", pg.Spec.SchedulingPolicy.Gang.MinCount)
	}
}

// TestSubmissionReplacesStalePodGroup: a PodGroup whose count differs from
// its (current) Workload's is deleted and made again.
func TestSubmissionReplacesStalePodGroup(t *testing.T) {
	cluster := gangCluster(2).Obj()
	s, c := newScheduler(t, BuildWorkload(cluster), BuildPodGroup(gangCluster(0).Obj()))
	err := s.DoBatchSchedulingOnSubmission(t.Context(), cluster)
	if !batchscheduler.IsWaiting(err) || err.Error() != "deleted stale PodGroup ns/rc-cluster, will retry after deletion completes" {
		t.Fatalf("first pass: %v", err)
	}
	if err := s.DoBatchSchedulingOnSubmission(t.Context(), cluster); err != nil {
		t.Fatal(err)
	}
	pg := &scheduling.PodGroup{}
	if !exists(t, c, podGroupKey, pg) || pg.Spec.SchedulingPolicy.Gang.MinCount != 3 {
		t.Errorf("PodGroup %+v, want minCount 3", pg.Spec)
	}
}

func TestSubmissionRefusesForeignObjects(t *testing.T) {
	cluster := gangCluster(1).Obj()
	for name, c := range map[string]struct {
		objs []client.Object
		want string
	}{
		"Workload": {[]client.Object{foreign(BuildWorkload(cluster))},
			"Workload ns/rc already exists and is not owned by this RayCluster; rename it or use a different RayCluster name to avoid the collision"},
		"PodGroup": {[]client.Object{BuildWorkload(cluster), foreign(BuildPodGroup(cluster))},
			"PodGroup ns/rc-cluster already exists and is not owned by this RayCluster; rename it or use a different RayCluster name to avoid the collision"},
	} {
		s, cl := newScheduler(t, c.objs...)
		err := s.DoBatchSchedulingOnSubmission(t.Context(), cluster)
		if !batchscheduler.IsRejected(err) || err.Error() != c.want {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
		if name == "Workload" && exists(t, cl, podGroupKey, &scheduling.PodGroup{}) {
			t.Errorf("%s: a PodGroup was made beside a foreign Workload", name)
		}
	}
}

// TestSubmissionSkipsAndCleansUp: a cluster that loses the label or turns
// autoscaling on loses its PodGroup, then its Workload.
func TestSubmissionSkipsAndCleansUp(t *testing.T) {
	old := gangCluster(1).Obj()
	for name, cluster := range map[string]*rayv1.RayCluster{
		"no gang label": gangCluster(1).Label(batchscheduler.LabelGangSchedulingEnabled, "false").Obj(),
		"autoscaling":   gangCluster(1).Spec(wrappers.MakeRayClusterSpec().WorkerGroup("small", 1, 0, 3).Autoscaling().Obj()).Obj(),
	} {
		s, c := newScheduler(t, BuildWorkload(old), BuildPodGroup(old))
		err := s.DoBatchSchedulingOnSubmission(t.Context(), cluster)
		if !batchscheduler.IsWaiting(err) || err.Error() != "waiting for PodGroup ns/rc-cluster to finish deleting" {
			t.Errorf("%s: first pass %v", name, err)
		}
		if exists(t, c, podGroupKey, &scheduling.PodGroup{}) || !exists(t, c, workloadKey, &scheduling.Workload{}) {
			t.Errorf("%s: the PodGroup goes first", name)
		}
		if err := s.DoBatchSchedulingOnSubmission(t.Context(), cluster); err != nil || exists(t, c, workloadKey, &scheduling.Workload{}) {
			t.Errorf("%s: second pass %v, Workload left", name, err)
		}
	}
}

func TestCleanupOnCompletion(t *testing.T) {
	cluster := gangCluster(1).Obj()
	for name, c := range map[string]struct {
		objs            []client.Object
		wantCleaned     bool
		wantWait        bool
		podGroupLeft    bool
		podGroupFinals  []string
		workloadLeft    bool
		secondCleaned   bool
		secondWorkloads bool
	}{
		"nothing": {},
		"own PodGroup (protected) and Workload": {
			objs:        []client.Object{BuildWorkload(cluster), withFinalizers(BuildPodGroup(cluster), scheduling.PodGroupProtectionFinalizer)},
			wantCleaned: true, wantWait: true, workloadLeft: true, secondCleaned: true,
		},
		"foreign PodGroup is left, own Workload goes": {
			objs:        []client.Object{BuildWorkload(cluster), foreign(withFinalizers(BuildPodGroup(cluster), scheduling.PodGroupProtectionFinalizer))},
			wantCleaned: true, podGroupLeft: true, podGroupFinals: []string{scheduling.PodGroupProtectionFinalizer},
		},
		"foreign Workload is left, own PodGroup goes": {
			objs:        []client.Object{foreign(BuildWorkload(cluster)), BuildPodGroup(cluster)},
			wantCleaned: true, wantWait: true, workloadLeft: true, secondWorkloads: true,
		},
		"another finalizer holds the PodGroup and so the Workload": {
			objs:        []client.Object{BuildWorkload(cluster), withFinalizers(BuildPodGroup(cluster), scheduling.PodGroupProtectionFinalizer, "example.com/retain")},
			wantCleaned: true, wantWait: true, podGroupLeft: true, podGroupFinals: []string{"example.com/retain"}, workloadLeft: true, secondWorkloads: true,
		},
	} {
		s, cl := newScheduler(t, c.objs...)
		cleaned, err := s.CleanupOnCompletion(t.Context(), cluster)
		if cleaned != c.wantCleaned || batchscheduler.IsWaiting(err) != c.wantWait || (!c.wantWait && err != nil) {
			t.Errorf("%s: cleaned %v err %v", name, cleaned, err)
		}
		pg := &scheduling.PodGroup{}
		if exists(t, cl, podGroupKey, pg) != c.podGroupLeft || (c.podGroupLeft && !cmp.Equal(pg.Finalizers, c.podGroupFinals)) {
			t.Errorf("%s: PodGroup left %v with finalizers %v", name, c.podGroupLeft, pg.Finalizers)
		}
		if exists(t, cl, workloadKey, &scheduling.Workload{}) != c.workloadLeft {
			t.Errorf("%s: Workload left %v", name, !c.workloadLeft)
		}
		if !c.wantWait {
			continue
		}
		cleaned, err = s.CleanupOnCompletion(t.Context(), cluster)
		if cleaned != c.secondCleaned || exists(t, cl, workloadKey, &scheduling.Workload{}) != c.secondWorkloads {
			t.Errorf("%s: second call cleaned %v err %v", name, cleaned, err)
		}
	}
}

// TestStaleWorkloadDeleteIsUIDGuarded: the Workload is deleted only if it
// is still the object read; a namesake made meanwhile survives.
func TestStaleWorkloadDeleteIsUIDGuarded(t *testing.T) {
	old := BuildWorkload(gangCluster(1).Obj())
	old.UID = "first"
	scheme := runtime.NewScheme()
	if err := scheduling.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	var preconditionUID types.UID
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(old).WithInterceptorFuncs(interceptor.Funcs{
		Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			do := &client.DeleteOptions{}
			do.ApplyOptions(opts)
			if do.Preconditions != nil && do.Preconditions.UID != nil {
				preconditionUID = *do.Preconditions.UID
			}
			return c.Delete(ctx, obj, opts...)
		},
	}).Build()
	s := &Scheduler{c: c}
	if err := s.DoBatchSchedulingOnSubmission(t.Context(), gangCluster(4).Obj()); !batchscheduler.IsWaiting(err) {
		t.Fatalf("first pass: %v", err)
	}
	if preconditionUID != "first" {
		t.Errorf("delete precondition UID %q, want the Workload's", preconditionUID)
	}
}

func TestAddMetadataToChildResource(t *testing.T) {
	s := &Scheduler{}
	for _, group := range []string{batchscheduler.HeadGroup, "small"} {
		pod := &corev1.Pod{}
		s.AddMetadataToChildResource(t.Context(), gangCluster(1).Obj(), pod, group)
		want := corev1.PodSpec{SchedulerName: "default-scheduler", SchedulingGroup: &corev1.PodSchedulingGroup{PodGroupName: new("rc-cluster")}}
		if diff := cmp.Diff(want, pod.Spec); diff != "" {
			t.Errorf("%s Pod (-want +got):\n%s", group, diff)
		}
	}
	tmpl := &corev1.PodTemplateSpec{}
	s.AddMetadataToChildResource(t.Context(), gangCluster(1).Obj(), tmpl, "small")
	if tmpl.Spec.SchedulingGroup == nil || *tmpl.Spec.SchedulingGroup.PodGroupName != "rc-cluster" || tmpl.Spec.SchedulerName != "default-scheduler" {
		t.Errorf("template %+v", tmpl.Spec)
	}
	for name, parent := range map[string]metav1.Object{
		"skipped cluster": gangCluster(1).Spec(wrappers.MakeRayClusterSpec().WorkerGroup("small", 1, 0, 3).Autoscaling().Obj()).Obj(),
		"a RayJob":        wrappers.MakeRayJob("j", "ns").Label(batchscheduler.LabelGangSchedulingEnabled, "true").Obj(),
	} {
		pod := &corev1.Pod{}
		s.AddMetadataToChildResource(t.Context(), parent, pod, "small")
		if pod.Spec.SchedulingGroup != nil || pod.Spec.SchedulerName != "" {
			t.Errorf("%s: Pod changed: %+v", name, pod.Spec)
		}
	}
}

func TestOtherObjectsAreIgnored(t *testing.T) {
	s, _ := newScheduler(t)
	job := wrappers.MakeRayJob("j", "ns").Label(batchscheduler.LabelGangSchedulingEnabled, "true").Obj()
	if err := s.DoBatchSchedulingOnSubmission(t.Context(), job); err != nil {
		t.Error(err)
	}
	if cleaned, err := s.CleanupOnCompletion(t.Context(), job); cleaned || err != nil {
		t.Errorf("cleanup of a RayJob: %v %v", cleaned, err)
	}
	if s.Name() != "kubernetes-was-v1alpha2" {
		t.Errorf("Name %q", s.Name())
	}
}
