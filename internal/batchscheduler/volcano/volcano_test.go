package volcano_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	volcanov1beta1 "volcano.sh/apis/pkg/apis/scheduling/v1beta1"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/batchscheduler"
	"github.com/ray-operator/ray-operator/internal/batchscheduler/volcano"
	"github.com/ray-operator/ray-operator/internal/testing/wrappers"
)

// spec: head 1 CPU / 1Gi; "small": 3 replicas (1..5) at 500m / 512Mi.
func spec() *wrappers.RayClusterSpecWrapper {
	return wrappers.MakeRayClusterSpec().WorkerGroup("small", 3, 1, 5).
		Requests(rayv1.HeadGroupName, wrappers.Resources("cpu", "1", "memory", "1Gi")).
		Requests("small", wrappers.Resources("cpu", "500m", "memory", "512Mi"))
}

func TestGangSize(t *testing.T) {
	for name, c := range map[string]struct {
		spec      *rayv1.RayClusterSpec
		minMember int32
		res       map[string]string
	}{
		"desired workers plus the head": {spec().Obj(), 4, map[string]string{"cpu": "2500m", "memory": "2560Mi"}},
		"autoscaling: minReplicas":      {spec().Autoscaling().Obj(), 2, map[string]string{"cpu": "1500m", "memory": "1536Mi"}},
		"suspended group drops out":     {spec().SuspendGroup("small").Obj(), 1, map[string]string{"cpu": "1", "memory": "1Gi"}},
	} {
		t.Run(name, func(t *testing.T) {
			minMember, got := volcano.GangSize(c.spec)
			if minMember != c.minMember {
				t.Errorf("minMember = %d, want %d", minMember, c.minMember)
			}
			if diff := cmp.Diff(c.res, wrappers.ResourceStrings(got)); diff != "" {
				t.Errorf("minResources (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSubmitterResources(t *testing.T) {
	custom := &corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{
		Name: "submit", Resources: corev1.ResourceRequirements{Requests: wrappers.Resources("cpu", "2"), Limits: wrappers.Resources("memory", "3Gi")},
	}}}}
	for name, c := range map[string]struct {
		job  *rayv1.RayJob
		want map[string]string
	}{
		"K8sJobMode default submitter": {wrappers.MakeRayJob("j", "ns").Obj(), map[string]string{"cpu": "500m", "memory": "200Mi"}},
		"K8sJobMode user template, limits fill in": {func() *rayv1.RayJob {
			j := wrappers.MakeRayJob("j", "ns").Obj()
			j.Spec.SubmitterPodTemplate = custom
			return j
		}(), map[string]string{"cpu": "2", "memory": "3Gi"}},
		"SidecarMode container":     {wrappers.MakeRayJob("j", "ns").Mode(rayv1.SidecarMode).Obj(), map[string]string{"cpu": "500m", "memory": "200Mi"}},
		"HTTPMode has no submitter": {wrappers.MakeRayJob("j", "ns").Mode(rayv1.HTTPMode).Obj(), map[string]string{}},
		"InteractiveMode has none":  {wrappers.MakeRayJob("j", "ns").Mode(rayv1.InteractiveMode).Obj(), map[string]string{}},
	} {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(c.want, wrappers.ResourceStrings(volcano.SubmitterResources(c.job))); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestPodGroupName(t *testing.T) {
	if got := volcano.PodGroupName(wrappers.MakeRayCluster("c", "ns").Obj()); got != "ray-c-pg" {
		t.Errorf("RayCluster: %q", got)
	}
	owned := wrappers.MakeRayCluster("job-abcde", "ns").Label(rayv1.LabelOriginatedFromCRD, rayv1.KindRayJob).Label(rayv1.LabelOriginatedFromCRName, "job").Obj()
	if got := volcano.PodGroupName(owned); got != "ray-job-pg" {
		t.Errorf("RayJob's cluster: %q, want the RayJob's PodGroup", got)
	}
	service := wrappers.MakeRayCluster("svc-x", "ns").Label(rayv1.LabelOriginatedFromCRD, rayv1.KindRayService).Label(rayv1.LabelOriginatedFromCRName, "svc").Obj()
	if got := volcano.PodGroupName(service); got != "ray-svc-x-pg" {
		t.Errorf("RayService's cluster: %q, want its own", got)
	}
}

func TestBuildPodGroup(t *testing.T) {
	cluster := wrappers.MakeRayCluster("c", "ns").
		Label(volcano.LabelQueueName, "q1").Label(batchscheduler.LabelPriorityClassName, "high").
		Label(volcano.LabelNetworkTopologyMode, "hard").Label(volcano.LabelNetworkTopologyHighestTierAllowed, "2").
		Annotation("a", "b").Obj()
	cluster.UID = "uid-c"
	pg, err := volcano.BuildPodGroup(cluster, rayv1.KindRayCluster, 4, wrappers.Resources("cpu", "2"))
	if err != nil {
		t.Fatal(err)
	}
	want := &volcanov1beta1.PodGroup{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: "ns", Name: "ray-c-pg", Annotations: map[string]string{"a": "b"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "ray.io/v1", Kind: "RayCluster", Name: "c", UID: "uid-c", Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}},
		},
		Spec: volcanov1beta1.PodGroupSpec{
			MinMember: 4, MinResources: &corev1.ResourceList{"cpu": resource.MustParse("2")},
			Queue: "q1", PriorityClassName: "high",
			NetworkTopology: &volcanov1beta1.NetworkTopologySpec{Mode: "hard", HighestTierAllowed: ptr.To(2)},
		},
		Status: volcanov1beta1.PodGroupStatus{Phase: volcanov1beta1.PodGroupPending},
	}
	if diff := cmp.Diff(want, pg); diff != "" {
		t.Errorf("PodGroup (-want +got):\n%s", diff)
	}

	bad := wrappers.MakeRayCluster("c", "ns").Label(volcano.LabelNetworkTopologyMode, "soft").Label(volcano.LabelNetworkTopologyHighestTierAllowed, "two").Obj()
	if _, err := volcano.BuildPodGroup(bad, rayv1.KindRayCluster, 1, nil); !batchscheduler.IsRejected(err) {
		t.Errorf("a highest tier that is no integer: err = %v, want a rejection", err)
	}
}

func TestAddMetadataToChildResource(t *testing.T) {
	s := &volcano.Scheduler{}
	cluster := wrappers.MakeRayCluster("c", "ns").Label(volcano.LabelQueueName, "q1").Label(batchscheduler.LabelPriorityClassName, "high").Obj()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"x": "y"}}}
	s.AddMetadataToChildResource(t.Context(), cluster, pod, "small")
	want := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Labels:      map[string]string{"x": "y", volcano.LabelQueueName: "q1", batchscheduler.LabelPriorityClassName: "high"},
			Annotations: map[string]string{"scheduling.k8s.io/group-name": "ray-c-pg", "volcano.sh/task-spec": "small"},
		},
		Spec: corev1.PodSpec{SchedulerName: "volcano"},
	}
	if diff := cmp.Diff(want, pod); diff != "" {
		t.Errorf("Pod (-want +got):\n%s", diff)
	}

	job := wrappers.MakeRayJob("j", "ns").Label(volcano.LabelQueueName, "q2").Obj()
	template := &corev1.PodTemplateSpec{}
	s.AddMetadataToChildResource(t.Context(), job, template, batchscheduler.SubmitterGroup)
	if template.Spec.SchedulerName != "volcano" || template.Annotations["scheduling.k8s.io/group-name"] != "ray-j-pg" ||
		template.Annotations["volcano.sh/task-spec"] != "submitter" || template.Labels[volcano.LabelQueueName] != "q2" {
		t.Errorf("submitter template = %+v", template)
	}
}

func newScheduler(t *testing.T, objs ...client.Object) (*volcano.Scheduler, client.Client) {
	t.Helper()
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{rayv1.AddToScheme, volcano.Factory{}.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).Build()
	s, err := volcano.Factory{}.New(t.Context(), nil, c)
	if err != nil {
		t.Fatal(err)
	}
	return s.(*volcano.Scheduler), c
}

func getPodGroup(t *testing.T, c client.Client, name string) *volcanov1beta1.PodGroup {
	t.Helper()
	pg := &volcanov1beta1.PodGroup{}
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: "ns", Name: name}, pg); err != nil {
		t.Fatalf("PodGroup %s: %v", name, err)
	}
	return pg
}

func TestSubmissionCreatesThenResizes(t *testing.T) {
	s, c := newScheduler(t)
	cluster := wrappers.MakeRayCluster("c", "ns").Spec(spec().Obj()).Obj()
	if err := s.DoBatchSchedulingOnSubmission(t.Context(), cluster); err != nil {
		t.Fatal(err)
	}
	if pg := getPodGroup(t, c, "ray-c-pg"); pg.Spec.MinMember != 4 {
		t.Errorf("created minMember = %d, want 4", pg.Spec.MinMember)
	}
	*cluster.Spec.WorkerGroupSpecs[0].Replicas = 5
	if err := s.DoBatchSchedulingOnSubmission(t.Context(), cluster); err != nil {
		t.Fatal(err)
	}
	pg := getPodGroup(t, c, "ray-c-pg")
	if pg.Spec.MinMember != 6 || wrappers.ResourceStrings(*pg.Spec.MinResources)["cpu"] != "3500m" {
		t.Errorf("resized to minMember %d, %v; want 6 and 3500m CPU", pg.Spec.MinMember, wrappers.ResourceStrings(*pg.Spec.MinResources))
	}
}

func TestSubmissionOfRayJobs(t *testing.T) {
	s, c := newScheduler(t)
	job := wrappers.MakeRayJob("j", "ns").Obj()
	job.Spec.RayClusterSpec = spec().Obj()
	if err := s.DoBatchSchedulingOnSubmission(t.Context(), job); err != nil {
		t.Fatal(err)
	}
	pg := getPodGroup(t, c, "ray-j-pg")
	if pg.Spec.MinMember != 4 {
		t.Errorf("minMember = %d, want 4: the submitter is not a member", pg.Spec.MinMember)
	}
	if diff := cmp.Diff(map[string]string{"cpu": "3", "memory": "2760Mi"}, wrappers.ResourceStrings(*pg.Spec.MinResources)); diff != "" {
		t.Errorf("minResources, with the submitter's 500m/200Mi (-want +got):\n%s", diff)
	}
	if ref := pg.OwnerReferences[0]; ref.Kind != "RayJob" || ref.Name != "j" {
		t.Errorf("owner = %+v, want the RayJob", ref)
	}

	owned := wrappers.MakeRayCluster("j-x", "ns").Spec(spec().Obj()).Label(rayv1.LabelOriginatedFromCRD, rayv1.KindRayJob).Label(rayv1.LabelOriginatedFromCRName, "j").Obj()
	if err := s.DoBatchSchedulingOnSubmission(t.Context(), owned); err != nil {
		t.Fatal(err)
	}
	if pg := getPodGroup(t, c, "ray-j-pg"); pg.Spec.MinMember != 4 || pg.OwnerReferences[0].Kind != "RayJob" {
		t.Errorf("the RayJob's cluster changed the RayJob's PodGroup: %+v", pg.Spec)
	}

	selector := wrappers.MakeRayJob("sel", "ns").Obj()
	selector.Spec.RayClusterSpec = nil
	selector.Spec.ClusterSelector = map[string]string{rayv1.ClusterSelectorKey: "c"}
	err := s.DoBatchSchedulingOnSubmission(t.Context(), selector)
	if !batchscheduler.IsRejected(err) || err.Error() != "gang scheduling does not support RayJob ns/sel referencing an existing RayCluster" {
		t.Errorf("clusterSelector RayJob: err = %v, want the rejection", err)
	}
	if err := s.DoBatchSchedulingOnSubmission(t.Context(), &rayv1.RayService{}); err == nil || batchscheduler.IsRejected(err) {
		t.Errorf("a RayService: err = %v, want a plain error", err)
	}
}

func TestCleanupOnCompletion(t *testing.T) {
	clusterSpec := spec().Obj()
	newJob := func() *rayv1.RayJob {
		j := wrappers.MakeRayJob("j", "ns").Obj()
		j.Spec.RayClusterSpec = clusterSpec
		j.Status.RayClusterName = "j-x"
		return j
	}
	withWorkersSuspended := wrappers.MakeRayCluster("j-x", "ns").Spec(spec().SuspendGroup("small").Obj()).Obj()
	for name, c := range map[string]struct {
		cluster   *rayv1.RayCluster
		job       func() *rayv1.RayJob
		cleaned   bool
		minMember int32
		cpu       string
	}{
		"cluster deleted: released": {nil, newJob, true, 0, ""},
		"cluster terminating: released": {
			wrappers.MakeRayCluster("j-x", "ns").Spec(clusterSpec).Terminating(time.Unix(100, 0)).Obj(), newJob, true, 0, ""},
		"workers suspended: the head only": {withWorkersSuspended, newJob, true, 1, "1"},
		"cluster unchanged: the gang without the submitter": {
			wrappers.MakeRayCluster("j-x", "ns").Spec(clusterSpec).Obj(), newJob, true, 4, "2500m"},
		"no cluster name yet: nothing": {nil, func() *rayv1.RayJob { j := newJob(); j.Status.RayClusterName = ""; return j }, false, 4, "3"},
	} {
		t.Run(name, func(t *testing.T) {
			objs := []client.Object{}
			if c.cluster != nil {
				if !c.cluster.DeletionTimestamp.IsZero() {
					c.cluster.Finalizers = []string{"test/hold"}
				}
				objs = append(objs, c.cluster)
			}
			s, cl := newScheduler(t, objs...)
			job := newJob()
			if err := s.DoBatchSchedulingOnSubmission(t.Context(), job); err != nil {
				t.Fatal(err)
			}
			cleaned, err := s.CleanupOnCompletion(t.Context(), c.job())
			if err != nil || cleaned != c.cleaned {
				t.Fatalf("CleanupOnCompletion = %v, %v; want %v", cleaned, err, c.cleaned)
			}
			pg := getPodGroup(t, cl, "ray-j-pg")
			if pg.Spec.MinMember != c.minMember || wrappers.ResourceStrings(*pg.Spec.MinResources)["cpu"] != c.cpu && c.cpu != "" || c.cpu == "" && len(*pg.Spec.MinResources) != 0 {
				t.Errorf("PodGroup minMember %d, resources %v; want %d and cpu %q", pg.Spec.MinMember, wrappers.ResourceStrings(*pg.Spec.MinResources), c.minMember, c.cpu)
			}
			if again, err := s.CleanupOnCompletion(t.Context(), c.job()); err != nil || again {
				t.Errorf("a second cleanup = %v, %v; want nothing to do", again, err)
			}
		})
	}

	s, _ := newScheduler(t)
	if cleaned, err := s.CleanupOnCompletion(t.Context(), wrappers.MakeRayCluster("c", "ns").Obj()); cleaned || err != nil {
		t.Errorf("a RayCluster: %v, %v; want nothing (its PodGroup goes with it)", cleaned, err)
	}
}

// TestMultiHostGroupsMakeOneGang: KubeRay at feeaf72 writes no
// subGroupPolicy (per-replica subgroups came after it, in ray-project/
// kuberay#5249), whatever the RayMultiHostIndexing gate says: a multi-host
// group counts numOfHosts Pods per replica in the one gang, and the
// PodGroup is exactly that, with no subgroups and no minTaskMember.
func TestMultiHostGroupsMakeOneGang(t *testing.T) {
	s, c := newScheduler(t)
	// head 1 CPU; "tpu": 2 replicas (1..3) of 4 hosts at 2 CPU; "cpu": 1
	// replica (0..2) of one host at 500m.
	clusterSpec := wrappers.MakeRayClusterSpec().
		WorkerGroup("tpu", 2, 1, 3).Hosts("tpu", 4).WorkerGroup("cpu", 1, 0, 2).Hosts("cpu", 1).
		Requests(rayv1.HeadGroupName, wrappers.Resources("cpu", "1")).
		Requests("tpu", wrappers.Resources("cpu", "2")).Requests("cpu", wrappers.Resources("cpu", "500m")).Obj()
	cluster := wrappers.MakeRayCluster("multi", "ns").Spec(clusterSpec).Obj()
	cluster.UID = "uid-multi"
	if err := s.DoBatchSchedulingOnSubmission(t.Context(), cluster); err != nil {
		t.Fatal(err)
	}
	want := &volcanov1beta1.PodGroup{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: "ns", Name: "ray-multi-pg", ResourceVersion: "1",
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "ray.io/v1", Kind: "RayCluster", Name: "multi", UID: "uid-multi", Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}},
		},
		Spec: volcanov1beta1.PodGroupSpec{
			// The head, 2 x 4 TPU hosts and 1 CPU worker.
			MinMember:    10,
			MinResources: &corev1.ResourceList{"cpu": resource.MustParse("17500m")},
		},
		Status: volcanov1beta1.PodGroupStatus{Phase: volcanov1beta1.PodGroupPending},
	}
	got := getPodGroup(t, c, "ray-multi-pg")
	got.TypeMeta = metav1.TypeMeta{}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })); diff != "" {
		t.Errorf("PodGroup (-want +got):\n%s", diff)
	}
}
