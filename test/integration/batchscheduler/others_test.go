package batchscheduler_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/utils/ptr"
	schedv1alpha1 "sigs.k8s.io/scheduler-plugins/apis/scheduling/v1alpha1"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/batchscheduler"
	"github.com/ray-operator/ray-operator/internal/batchscheduler/kaischeduler"
	"github.com/ray-operator/ray-operator/internal/batchscheduler/schedulerplugins"
	"github.com/ray-operator/ray-operator/internal/batchscheduler/yunikorn"
	"github.com/ray-operator/ray-operator/internal/testing/wrappers"
)

// taskGroupNames decodes a task-groups annotation into the groups' names
// and sizes.
func taskGroupNames(t *testing.T, annotation string) map[string]int32 {
	t.Helper()
	var groups []yunikorn.TaskGroup
	if err := json.Unmarshal([]byte(annotation), &groups); err != nil {
		t.Fatalf("task groups %q: %v", annotation, err)
	}
	out := map[string]int32{}
	for _, g := range groups {
		out[g.Name] = g.MinMember
	}
	return out
}

func TestYuniKorn(t *testing.T) {
	w := newWorld(t, yunikorn.Name)
	rc := newCluster("yk", 2, map[string]string{
		yunikorn.LabelApplicationID: "app-yk", yunikorn.LabelQueue: "root.ray", batchscheduler.LabelGangSchedulingEnabled: "true",
	})
	rc.Spec.WorkerGroupSpecs[0].MinReplicas = ptr.To[int32](1)
	w.Create(rc)
	for _, pod := range w.WaitPods("yk", nil, 3) {
		if pod.Spec.SchedulerName != "yunikorn" || pod.Labels["applicationId"] != "app-yk" || pod.Labels["queue"] != "root.ray" ||
			pod.Annotations[yunikorn.AnnotationTaskGroupName] != pod.Labels[rayv1.LabelGroup] {
			t.Errorf("Pod %s: schedulerName %q labels %v annotations %v", pod.Name, pod.Spec.SchedulerName, pod.Labels, pod.Annotations)
		}
		if diff := cmp.Diff(map[string]int32{"headgroup": 1, "small": 1}, taskGroupNames(t, pod.Annotations[yunikorn.AnnotationTaskGroups])); diff != "" {
			t.Errorf("Pod %s task groups (-want +got):\n%s", pod.Name, diff)
		}
	}

	// A K8sJobMode RayJob: its task groups, with the submitter, travel on
	// the cluster to every Pod, and the submitter is its own group.
	w.Create(newRayJob("ykjob", rayv1.K8sJobMode, map[string]string{
		yunikorn.LabelApplicationID: "app-job", batchscheduler.LabelGangSchedulingEnabled: "",
	}))
	cluster := w.RayJobCluster("ykjob")
	withSubmitter := map[string]int32{"headgroup": 1, "small": 0, "submitter": 1}
	if diff := cmp.Diff(withSubmitter, taskGroupNames(t, cluster.Annotations[yunikorn.AnnotationTaskGroups])); diff != "" {
		t.Errorf("cluster task groups (-want +got):\n%s", diff)
	}
	for _, pod := range w.WaitPods(cluster.Name, nil, 2) {
		if pod.Labels["applicationId"] != "app-job" || pod.Annotations[yunikorn.AnnotationTaskGroups] != cluster.Annotations[yunikorn.AnnotationTaskGroups] {
			t.Errorf("Pod %s labels %v annotations %v", pod.Name, pod.Labels, pod.Annotations)
		}
	}
	w.RunPods(cluster.Name, 2)
	submitter := &batchv1.Job{}
	w.WaitGet("ykjob", submitter)
	tmpl := submitter.Spec.Template
	if tmpl.Spec.SchedulerName != "yunikorn" || tmpl.Annotations[yunikorn.AnnotationTaskGroupName] != "submitter" || tmpl.Labels["applicationId"] != "app-job" {
		t.Errorf("submitter template: schedulerName %q labels %v annotations %v", tmpl.Spec.SchedulerName, tmpl.Labels, tmpl.Annotations)
	}
	if diff := cmp.Diff(withSubmitter, taskGroupNames(t, tmpl.Annotations[yunikorn.AnnotationTaskGroups])); diff != "" {
		t.Errorf("submitter task groups (-want +got):\n%s", diff)
	}
}

func TestKAIScheduler(t *testing.T) {
	w := newWorld(t, kaischeduler.Name)
	w.Create(newCluster("kai", 1, map[string]string{kaischeduler.LabelQueue: "team-a"}))
	for _, pod := range w.WaitPods("kai", nil, 2) {
		if pod.Spec.SchedulerName != "kai-scheduler" || pod.Labels[kaischeduler.LabelQueue] != "team-a" {
			t.Errorf("Pod %s: schedulerName %q labels %v", pod.Name, pod.Spec.SchedulerName, pod.Labels)
		}
	}

	// K8sJobMode is refused before any cluster is made.
	w.Create(newRayJob("k8s", rayv1.K8sJobMode, map[string]string{kaischeduler.LabelQueue: "team-a"}))
	note := w.WaitEvent("k8s", "FailedBatchScheduling").Note
	if want := "batch scheduler kai-scheduler: KAI-Scheduler does not support RayJob with K8sJobMode: the submitter pod is created after RayCluster is ready, preventing proper gang scheduling"; note != want {
		t.Errorf("event note %q", note)
	}
	w.Consistently("the refused RayJob to stay Initializing without a cluster", 4*time.Second, func() (bool, error) {
		j := w.RayJob("k8s")
		return j.Status.JobDeploymentStatus == rayv1.JobDeploymentStatusInitializing && !w.Get(j.Status.RayClusterName, &rayv1.RayCluster{}), nil
	})

	// SidecarMode runs, with the queue on the cluster's Pods.
	w.Create(newRayJob("sidecar", rayv1.SidecarMode, map[string]string{kaischeduler.LabelQueue: "team-b"}))
	cluster := w.RayJobCluster("sidecar")
	for _, pod := range w.WaitPods(cluster.Name, nil, 2) {
		if pod.Spec.SchedulerName != "kai-scheduler" || pod.Labels[kaischeduler.LabelQueue] != "team-b" {
			t.Errorf("Pod %s: schedulerName %q labels %v", pod.Name, pod.Spec.SchedulerName, pod.Labels)
		}
	}
}

func TestSchedulerPlugins(t *testing.T) {
	w := newWorld(t, schedulerplugins.Name)
	rc := newCluster("sp", 2, map[string]string{batchscheduler.LabelGangSchedulingEnabled: "true"})
	rc.Spec.EnableInTreeAutoscaling = ptr.To(true)
	rc.Spec.WorkerGroupSpecs[0].MinReplicas = ptr.To[int32](1)
	w.Create(rc)
	pg := &schedv1alpha1.PodGroup{}
	w.WaitGet("sp", pg)
	// The head and the 2 desired workers, autoscaling or not, as KubeRay.
	if pg.Spec.MinMember != 3 || !cmp.Equal(map[string]string{"cpu": "1500m", "memory": "3Gi"}, wrappers.ResourceStrings(pg.Spec.MinResources)) {
		t.Errorf("PodGroup minMember %d minResources %v", pg.Spec.MinMember, wrappers.ResourceStrings(pg.Spec.MinResources))
	}
	if refs := pg.OwnerReferences; len(refs) != 1 || refs[0].Kind != "RayCluster" || refs[0].Name != "sp" || refs[0].UID == "" {
		t.Errorf("owner references %+v", refs)
	}
	for _, pod := range w.WaitPods("sp", nil, 3) {
		if pod.Spec.SchedulerName != "scheduler-plugins-scheduler" || pod.Labels[schedulerplugins.LabelPodGroup] != "sp" {
			t.Errorf("Pod %s: schedulerName %q labels %v", pod.Name, pod.Spec.SchedulerName, pod.Labels)
		}
	}

	w.Create(newCluster("nogang", 1, nil))
	for _, pod := range w.WaitPods("nogang", nil, 2) {
		if _, ok := pod.Labels[schedulerplugins.LabelPodGroup]; ok || pod.Spec.SchedulerName != "scheduler-plugins-scheduler" {
			t.Errorf("Pod %s: schedulerName %q labels %v", pod.Name, pod.Spec.SchedulerName, pod.Labels)
		}
	}
	if w.Get("nogang", &schedv1alpha1.PodGroup{}) {
		t.Error("a PodGroup without ray.io/gang-scheduling-enabled")
	}

	// RayJobs are RayCluster-only territory: refused.
	w.Create(newRayJob("spjob", rayv1.SidecarMode, map[string]string{batchscheduler.LabelGangSchedulingEnabled: "true"}))
	w.Eventually("the refusal in status.message", func() (bool, error) {
		j := w.RayJob("spjob")
		return j.Status.Message == "batch scheduler scheduler-plugins: currently only RayCluster is supported, got *v1.RayJob", fmt.Errorf("%q", j.Status.Message)
	})
	w.WaitEvent("spjob", "FailedBatchScheduling")
	if j := w.RayJob("spjob"); j.Status.JobDeploymentStatus != rayv1.JobDeploymentStatusInitializing || w.Get(j.Status.RayClusterName, &rayv1.RayCluster{}) {
		t.Errorf("refused RayJob: %s, cluster %q created", j.Status.JobDeploymentStatus, j.Status.RayClusterName)
	}
}
