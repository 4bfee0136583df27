package yunikorn_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/batchscheduler"
	"github.com/ray-operator/ray-operator/internal/batchscheduler/yunikorn"
	"github.com/ray-operator/ray-operator/internal/testing/wrappers"
)

// cluster: head 1 CPU with a node selector; "small": 3 replicas (2..5) of 2
// hosts at 500m.
func cluster() *wrappers.RayClusterWrapper {
	spec := wrappers.MakeRayClusterSpec().WorkerGroup("small", 3, 2, 5).Hosts("small", 2).
		Requests(rayv1.HeadGroupName, wrappers.Resources("cpu", "1")).Requests("small", wrappers.Resources("cpu", "500m")).Obj()
	spec.HeadGroupSpec.Template.Spec.NodeSelector = map[string]string{"pool": "head"}
	return wrappers.MakeRayCluster("c", "ns").Spec(spec).
		Label(yunikorn.LabelApplicationID, "app-1").Label(yunikorn.LabelQueue, "root.ray")
}

const clusterGroups = `[{"minResource":{"cpu":"1"},"nodeSelector":{"pool":"head"},"name":"headgroup","minMember":1},` +
	`{"minResource":{"cpu":"500m"},"name":"small","minMember":4}]`

func TestAddMetadataWithoutGang(t *testing.T) {
	pod := &corev1.Pod{}
	yunikorn.Scheduler{}.AddMetadataToChildResource(t.Context(), cluster().Obj(), pod, "small")
	want := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"applicationId": "app-1", "queue": "root.ray"}},
		Spec:       corev1.PodSpec{SchedulerName: "yunikorn"},
	}
	if diff := cmp.Diff(want, pod); diff != "" {
		t.Errorf("Pod (-want +got):\n%s", diff)
	}
}

func TestAddMetadataWithGang(t *testing.T) {
	c := cluster().Label(batchscheduler.LabelGangSchedulingEnabled, "").Obj()
	pod := &corev1.Pod{}
	yunikorn.Scheduler{}.AddMetadataToChildResource(t.Context(), c, pod, "headgroup")
	if diff := cmp.Diff(map[string]string{
		"yunikorn.apache.org/task-groups":     clusterGroups,
		"yunikorn.apache.org/task-group-name": "headgroup",
	}, pod.Annotations); diff != "" {
		t.Errorf("annotations (-want +got):\n%s", diff)
	}

	// A RayJob's cluster carries the RayJob's groups (with the submitter):
	// its Pods get those.
	c.Annotations = map[string]string{yunikorn.AnnotationTaskGroups: "[from-the-rayjob]"}
	pod = &corev1.Pod{}
	yunikorn.Scheduler{}.AddMetadataToChildResource(t.Context(), c, pod, "small")
	if pod.Annotations[yunikorn.AnnotationTaskGroups] != "[from-the-rayjob]" || pod.Annotations[yunikorn.AnnotationTaskGroupName] != "small" {
		t.Errorf("annotations = %v", pod.Annotations)
	}
}

func TestRayJobTaskGroups(t *testing.T) {
	job := wrappers.MakeRayJob("j", "ns").Label(batchscheduler.LabelGangSchedulingEnabled, "true").Label(yunikorn.LabelQueue, "root.jobs").Obj()
	job.Spec.RayClusterSpec = cluster().Obj().Spec.DeepCopy()

	// The RayJob's cluster (K8sJobMode): no group name of its own.
	rc := &rayv1.RayCluster{}
	yunikorn.Scheduler{}.AddMetadataToChildResource(t.Context(), job, rc, "")
	if _, ok := rc.Annotations[yunikorn.AnnotationTaskGroupName]; ok || rc.Labels["queue"] != "root.jobs" {
		t.Errorf("cluster metadata = %v %v", rc.Labels, rc.Annotations)
	}
	var groups []yunikorn.TaskGroup
	if err := json.Unmarshal([]byte(rc.Annotations[yunikorn.AnnotationTaskGroups]), &groups); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, g := range groups {
		names = append(names, g.Name)
	}
	if diff := cmp.Diff([]string{"headgroup", "small", "submitter"}, names); diff != "" {
		t.Errorf("task groups (-want +got):\n%s", diff)
	}
	sub := groups[2]
	cpu, mem := sub.MinResource["cpu"], sub.MinResource["memory"]
	if sub.MinMember != 1 || cpu.String() != "500m" || mem.String() != "200Mi" {
		t.Errorf("submitter group = %+v, want 1 member with the default submitter's requests", sub)
	}

	template := &corev1.PodTemplateSpec{}
	yunikorn.Scheduler{}.AddMetadataToChildResource(t.Context(), job, template, batchscheduler.SubmitterGroup)
	if template.Spec.SchedulerName != "yunikorn" || template.Annotations[yunikorn.AnnotationTaskGroupName] != "submitter" ||
		template.Annotations[yunikorn.AnnotationTaskGroups] != rc.Annotations[yunikorn.AnnotationTaskGroups] {
		t.Errorf("submitter template = %+v", template)
	}
}
