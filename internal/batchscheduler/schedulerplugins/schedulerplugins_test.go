package schedulerplugins_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	schedv1alpha1 "sigs.k8s.io/scheduler-plugins/apis/scheduling/v1alpha1"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/batchscheduler"
	"github.com/ray-operator/ray-operator/internal/batchscheduler/schedulerplugins"
	"github.com/ray-operator/ray-operator/internal/testing/wrappers"
)

func cluster() *wrappers.RayClusterWrapper {
	spec := wrappers.MakeRayClusterSpec().WorkerGroup("small", 2, 1, 4).Hosts("small", 2).Autoscaling().
		Requests(rayv1.HeadGroupName, corev1.ResourceList{"cpu": resource.MustParse("256m")}).
		Requests("small", corev1.ResourceList{"cpu": resource.MustParse("256m")}).
		Limits("small", corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")}).Obj()
	c := wrappers.MakeRayCluster("c", "ns").Spec(spec)
	c.UID = "uid-c"
	return c
}

func TestBuildPodGroup(t *testing.T) {
	got := schedulerplugins.BuildPodGroup(cluster().Obj())
	want := &schedv1alpha1.PodGroup{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c",
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "ray.io/v1", Kind: "RayCluster", Name: "c", UID: "uid-c"}}},
		Spec: schedv1alpha1.PodGroupSpec{
			// The head and 2 replicas x 2 hosts: desired, even with autoscaling.
			MinMember: 5,
			MinResources: corev1.ResourceList{
				"cpu": resource.MustParse("1280m"), "nvidia.com/gpu": resource.MustParse("4"),
			},
		},
	}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })); diff != "" {
		t.Errorf("PodGroup (-want +got):\n%s", diff)
	}
}

func TestAddMetadata(t *testing.T) {
	s := &schedulerplugins.Scheduler{}
	if s.Name() != "scheduler-plugins-scheduler" || schedulerplugins.Name != "scheduler-plugins" {
		t.Errorf("names %q %q", s.Name(), schedulerplugins.Name)
	}
	pod := &corev1.Pod{}
	s.AddMetadataToChildResource(t.Context(), cluster().Label(batchscheduler.LabelGangSchedulingEnabled, "true").Obj(), pod, "small")
	want := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"scheduling.x-k8s.io/pod-group": "c"}}, Spec: corev1.PodSpec{SchedulerName: "scheduler-plugins-scheduler"}}
	if diff := cmp.Diff(want, pod); diff != "" {
		t.Errorf("gang Pod (-want +got):\n%s", diff)
	}
	pod = &corev1.Pod{}
	s.AddMetadataToChildResource(t.Context(), cluster().Obj(), pod, "small")
	if len(pod.Labels) != 0 || pod.Spec.SchedulerName != "scheduler-plugins-scheduler" {
		t.Errorf("Pod without gang = %+v", pod)
	}
}

func TestSubmission(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := (schedulerplugins.Factory{}).AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(scheme).Build()
	s, err := schedulerplugins.Factory{}.New(t.Context(), nil, c)
	if err != nil {
		t.Fatal(err)
	}
	sub := s.(batchscheduler.Submitter)
	if err := sub.DoBatchSchedulingOnSubmission(t.Context(), cluster().Obj()); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: "ns", Name: "c"}, &schedv1alpha1.PodGroup{}); err == nil {
		t.Error("a PodGroup without the gang label")
	}
	gang := cluster().Label(batchscheduler.LabelGangSchedulingEnabled, "").Obj()
	if err := sub.DoBatchSchedulingOnSubmission(t.Context(), gang); err != nil {
		t.Fatal(err)
	}
	*gang.Spec.WorkerGroupSpecs[0].Replicas = 4
	if err := sub.DoBatchSchedulingOnSubmission(t.Context(), gang); err != nil {
		t.Fatal(err)
	}
	pg := &schedv1alpha1.PodGroup{}
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: "ns", Name: "c"}, pg); err != nil || pg.Spec.MinMember != 5 {
		t.Errorf("PodGroup %+v, %v; want minMember 5, kept as created", pg.Spec, err)
	}
	err = sub.DoBatchSchedulingOnSubmission(t.Context(), wrappers.MakeRayJob("j", "ns").Obj())
	if !batchscheduler.IsRejected(err) || err.Error() != "currently only RayCluster is supported, got *v1.RayJob" {
		t.Errorf("a RayJob: %v, want the rejection", err)
	}
}
