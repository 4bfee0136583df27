package batchscheduler_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	volcanov1beta1 "volcano.sh/apis/pkg/apis/scheduling/v1beta1"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/batchscheduler"
	"github.com/ray-operator/ray-operator/internal/batchscheduler/volcano"
	"github.com/ray-operator/ray-operator/internal/features"
	"github.com/ray-operator/ray-operator/internal/testing/testenv"
	"github.com/ray-operator/ray-operator/internal/testing/wrappers"
)

const (
	annotationGroupName = "scheduling.k8s.io/group-name"
	annotationTaskSpec  = "volcano.sh/task-spec"
)

// podGroup waits for the Volcano PodGroup name to have minMember and
// minResources and returns it.
func (w *world) volcanoPodGroup(name string, minMember int32, res map[string]string) *volcanov1beta1.PodGroup {
	w.T.Helper()
	pg := &volcanov1beta1.PodGroup{}
	w.Eventually(fmt.Sprintf("PodGroup %s with minMember %d and %v", name, minMember, res), func() (bool, error) {
		if !w.Get(name, pg) {
			return false, fmt.Errorf("no PodGroup")
		}
		got := map[string]string{}
		if pg.Spec.MinResources != nil {
			got = wrappers.ResourceStrings(*pg.Spec.MinResources)
		}
		return pg.Spec.MinMember == minMember && cmp.Equal(res, got), fmt.Errorf("minMember %d, %v", pg.Spec.MinMember, got)
	})
	return pg
}

func TestVolcanoRayCluster(t *testing.T) {
	w := newWorld(t, volcano.Name)
	w.Create(newCluster("gang", 2, map[string]string{volcano.LabelQueueName: "q1", batchscheduler.LabelPriorityClassName: "high"}))

	pg := w.volcanoPodGroup("ray-gang-pg", 3, map[string]string{"cpu": "1500m", "memory": "3Gi"})
	if pg.Spec.Queue != "q1" || pg.Spec.PriorityClassName != "high" {
		t.Errorf("queue %q priorityClassName %q", pg.Spec.Queue, pg.Spec.PriorityClassName)
	}
	if ref := metav1.GetControllerOf(pg); ref == nil || ref.Kind != "RayCluster" || ref.Name != "gang" {
		t.Errorf("PodGroup controller %+v", ref)
	}
	for _, pod := range w.WaitPods("gang", nil, 3) {
		group := pod.Labels[rayv1.LabelGroup]
		if pod.Spec.SchedulerName != "volcano" || pod.Annotations[annotationGroupName] != "ray-gang-pg" || pod.Annotations[annotationTaskSpec] != group ||
			pod.Labels[volcano.LabelQueueName] != "q1" || pod.Labels[batchscheduler.LabelPriorityClassName] != "high" {
			t.Errorf("Pod %s (group %s): schedulerName %q labels %v annotations %v", pod.Name, group, pod.Spec.SchedulerName, pod.Labels, pod.Annotations)
		}
	}

	// The gang follows the replicas.
	rc := &rayv1.RayCluster{}
	rc.Name, rc.Namespace = "gang", w.NS
	w.Update(rc, func() { rc.Spec.WorkerGroupSpecs[0].Replicas = ptr.To[int32](4) })
	w.volcanoPodGroup("ray-gang-pg", 5, map[string]string{"cpu": "2500m", "memory": "5Gi"})
	w.WaitPods("gang", nil, 5)
}

// TestVolcanoMultiHostGroupIsOneGang: with RayMultiHostIndexing on, the
// Pods of a multi-host group carry their replica's name and index, and the
// PodGroup still is one gang without subGroupPolicy, as KubeRay's at feeaf72
// (the API server keeps the field: the CRD of the volcano.sh/apis module
// has it).
func TestVolcanoMultiHostGroupIsOneGang(t *testing.T) {
	w := newWorld(t, volcano.Name, map[string]bool{string(features.RayMultiHostIndexing): true})
	rc := newCluster("multi", 2, map[string]string{volcano.LabelQueueName: "q1"})
	rc.Spec.WorkerGroupSpecs[0].NumOfHosts = 2
	w.Create(rc)

	pg := w.volcanoPodGroup("ray-multi-pg", 5, map[string]string{"cpu": "2500m", "memory": "5Gi"})
	want := volcanov1beta1.PodGroupSpec{
		MinMember:    5,
		MinResources: &corev1.ResourceList{"cpu": resource.MustParse("2500m"), "memory": resource.MustParse("5Gi")},
		Queue:        "q1",
	}
	if diff := cmp.Diff(want, pg.Spec, cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })); diff != "" {
		t.Errorf("PodGroup spec (-want +got):\n%s", diff)
	}
	replicas := map[string]int{}
	for _, pod := range w.WaitPods("multi", map[string]string{rayv1.LabelGroup: "small"}, 4) {
		replicas[pod.Labels[rayv1.LabelWorkerReplicaName]]++
		if pod.Labels[rayv1.LabelWorkerReplicaIndex] == "" || pod.Annotations[annotationGroupName] != "ray-multi-pg" {
			t.Errorf("Pod %s: labels %v annotations %v", pod.Name, pod.Labels, pod.Annotations)
		}
	}
	if len(replicas) != 2 {
		t.Errorf("worker Pods by replica name: %v, want 2 replicas of 2", replicas)
	}
}

func TestVolcanoAutoscalingGangIsMinReplicas(t *testing.T) {
	w := newWorld(t, volcano.Name)
	rc := newCluster("auto", 3, nil)
	rc.Spec.EnableInTreeAutoscaling = ptr.To(true)
	rc.Spec.WorkerGroupSpecs[0].MinReplicas = ptr.To[int32](1)
	w.Create(rc)
	// The head and one minReplicas worker, although 3 workers are desired.
	w.volcanoPodGroup("ray-auto-pg", 2, map[string]string{"cpu": "1", "memory": "2Gi"})
	w.WaitPods("auto", nil, 4)
}

func TestVolcanoBadTopologyLabel(t *testing.T) {
	w := newWorld(t, volcano.Name)
	w.Create(newCluster("topo", 1, map[string]string{
		volcano.LabelNetworkTopologyMode: "hard", volcano.LabelNetworkTopologyHighestTierAllowed: "two",
	}))
	note := w.WaitEvent("topo", "FailedBatchScheduling").Note
	if !strings.Contains(note, "failed to convert volcano.sh/network-topology-highest-tier-allowed label to int") {
		t.Errorf("event note %q", note)
	}
	rc := &rayv1.RayCluster{}
	w.Eventually("the ReplicaFailure condition", func() (bool, error) {
		w.Get("topo", rc)
		c := apimeta.FindStatusCondition(rc.Status.Conditions, string(rayv1.RayClusterReplicaFailure))
		return c != nil && c.Status == metav1.ConditionTrue && c.Reason == "FailedBatchScheduling", fmt.Errorf("%+v", rc.Status.Conditions)
	})
	if n := len(w.Pods("topo", nil)); n != 0 {
		t.Errorf("%d Pods made without their PodGroup", n)
	}

	w.Update(rc, func() { rc.Labels[volcano.LabelNetworkTopologyHighestTierAllowed] = "2" })
	pg := w.volcanoPodGroup("ray-topo-pg", 2, map[string]string{"cpu": "1", "memory": "2Gi"})
	if nt := pg.Spec.NetworkTopology; nt == nil || nt.Mode != "hard" || nt.HighestTierAllowed == nil || *nt.HighestTierAllowed != 2 {
		t.Errorf("networkTopology %+v", nt)
	}
	w.WaitPods("topo", nil, 2)
}

func TestVolcanoRayJob(t *testing.T) {
	w := newWorld(t, volcano.Name)
	job := newRayJob("job", rayv1.K8sJobMode, map[string]string{volcano.LabelQueueName: "q2"})
	job.Spec.ShutdownAfterJobFinishes = true
	w.Create(job)

	// The RayJob's gang: head and worker; the submitter's requests
	// (default 500m/200Mi) count in minResources only.
	pg := w.volcanoPodGroup("ray-job-pg", 2, map[string]string{"cpu": "1500m", "memory": "2248Mi"})
	if ref := metav1.GetControllerOf(pg); ref == nil || ref.Kind != "RayJob" || ref.Name != "job" || pg.Spec.Queue != "q2" {
		t.Errorf("PodGroup controller %+v queue %q", ref, pg.Spec.Queue)
	}
	cluster := w.RayJobCluster("job")
	if cluster.Annotations[annotationGroupName] != "ray-job-pg" || cluster.Labels[volcano.LabelQueueName] != "q2" {
		t.Errorf("K8sJobMode cluster metadata: labels %v annotations %v", cluster.Labels, cluster.Annotations)
	}
	for _, pod := range w.WaitPods(cluster.Name, nil, 2) {
		if pod.Spec.SchedulerName != "volcano" || pod.Annotations[annotationGroupName] != "ray-job-pg" || pod.Annotations[annotationTaskSpec] != pod.Labels[rayv1.LabelGroup] {
			t.Errorf("Pod %s: schedulerName %q annotations %v", pod.Name, pod.Spec.SchedulerName, pod.Annotations)
		}
	}
	if w.Get("ray-"+cluster.Name+"-pg", &volcanov1beta1.PodGroup{}) {
		t.Error("the RayJob's cluster has a PodGroup of its own")
	}

	w.RunPods(cluster.Name, 2)
	w.WaitRayJob("job", rayv1.JobDeploymentStatusRunning)
	submitter := &batchv1.Job{}
	w.WaitGet("job", submitter)
	tmpl := submitter.Spec.Template
	if tmpl.Spec.SchedulerName != "volcano" || tmpl.Annotations[annotationGroupName] != "ray-job-pg" || tmpl.Annotations[annotationTaskSpec] != "submitter" || tmpl.Labels[volcano.LabelQueueName] != "q2" {
		t.Errorf("submitter template: schedulerName %q labels %v annotations %v", tmpl.Spec.SchedulerName, tmpl.Labels, tmpl.Annotations)
	}

	// Complete: the PodGroup shrinks to what the cluster still runs, then
	// to nothing once shutdownAfterJobFinishes deleted the cluster.
	w.finishRayJob("job")
	w.WaitRayJob("job", rayv1.JobDeploymentStatusComplete)
	w.volcanoPodGroup("ray-job-pg", 0, map[string]string{})
	w.WaitEvent("job", "BatchSchedulerCleanedUp")
	if w.Get(cluster.Name, &rayv1.RayCluster{}) {
		t.Error("the cluster was not deleted")
	}
}

func TestVolcanoRayJobSuspendReleasesAndResumeRestores(t *testing.T) {
	w := newWorld(t, volcano.Name)
	job := newRayJob("sus", rayv1.K8sJobMode, nil)
	job.Spec.ShutdownAfterJobFinishes = true // required to suspend
	w.Create(job)
	w.volcanoPodGroup("ray-sus-pg", 2, map[string]string{"cpu": "1500m", "memory": "2248Mi"})
	w.RayJobCluster("sus")

	w.Update(job, func() { job.Spec.Suspend = true })
	w.WaitRayJob("sus", rayv1.JobDeploymentStatusSuspended)
	w.volcanoPodGroup("ray-sus-pg", 0, map[string]string{})
	w.WaitEvent("sus", "BatchSchedulerCleanedUp")

	w.Update(job, func() { job.Spec.Suspend = false })
	w.WaitRayJob("sus", rayv1.JobDeploymentStatusInitializing)
	w.volcanoPodGroup("ray-sus-pg", 2, map[string]string{"cpu": "1500m", "memory": "2248Mi"})
}

func TestVolcanoRejectsClusterSelector(t *testing.T) {
	w := newWorld(t, volcano.Name)
	w.Create(newCluster("shared", 1, nil))
	w.volcanoPodGroup("ray-shared-pg", 2, map[string]string{"cpu": "1", "memory": "2Gi"})
	job := newRayJob("sel", rayv1.HTTPMode, nil)
	job.Spec.RayClusterSpec = nil
	job.Spec.ClusterSelector = map[string]string{rayv1.ClusterSelectorKey: "shared"}
	w.Create(job)

	want := fmt.Sprintf("batch scheduler volcano: gang scheduling does not support RayJob %s/sel referencing an existing RayCluster", w.NS)
	w.Eventually("the refusal in status.message", func() (bool, error) {
		j := w.RayJob("sel")
		return j.Status.Message == want, fmt.Errorf("%s: %q", j.Status.JobDeploymentStatus, j.Status.Message)
	})
	if note := w.WaitEvent("sel", "FailedBatchScheduling").Note; note != want {
		t.Errorf("event note %q", note)
	}
	w.Consistently("the refused RayJob to stay Initializing without a PodGroup", 4*time.Second, func() (bool, error) {
		j := w.RayJob("sel")
		return j.Status.JobDeploymentStatus == rayv1.JobDeploymentStatusInitializing && !w.Get("ray-sel-pg", &volcanov1beta1.PodGroup{}), nil
	})
	if n := len(w.Events("sel", "FailedBatchScheduling")); n != 1 {
		t.Errorf("%d FailedBatchScheduling events, want 1 (reported once)", n)
	}
}

// TestVolcanoFailedCleanup makes the API server refuse PodGroup updates (a
// ValidatingAdmissionPolicy) when the RayJob finishes: the RayJob still
// completes, reports FailedToCleanupBatchScheduler, and releases the
// PodGroup once updates go through again.
func TestVolcanoFailedCleanup(t *testing.T) {
	w := newWorld(t, volcano.Name)
	w.Create(newRayJob("stuck", rayv1.K8sJobMode, nil))
	w.volcanoPodGroup("ray-stuck-pg", 2, map[string]string{"cpu": "1500m", "memory": "2248Mi"})
	cluster := w.RayJobCluster("stuck")
	w.RunPods(cluster.Name, 2)
	w.WaitRayJob("stuck", rayv1.JobDeploymentStatusRunning)

	remove := w.denyPodGroupUpdates()
	w.finishRayJob("stuck")
	w.WaitRayJob("stuck", rayv1.JobDeploymentStatusComplete)
	if note := w.WaitEvent("stuck", "FailedToCleanupBatchScheduler").Note; !strings.Contains(note, "denied") {
		t.Errorf("event note %q", note)
	}
	remove()
	// The cluster is kept (no shutdownAfterJobFinishes): the gang without
	// the submitter.
	w.volcanoPodGroup("ray-stuck-pg", 2, map[string]string{"cpu": "1", "memory": "2Gi"})
	w.WaitEvent("stuck", "BatchSchedulerCleanedUp")
}

// denyPodGroupUpdates installs a policy refusing updates of the
// namespace's Volcano PodGroups, and returns its removal.
func (w *world) denyPodGroupUpdates() func() {
	w.T.Helper()
	remove := testenv.Deny(w.T, w.Client, w.NS, "deny-podgroup-updates-"+w.NS, admissionregistrationv1.Update,
		admissionregistrationv1.Rule{APIGroups: []string{"scheduling.volcano.sh"}, APIVersions: []string{"*"}, Resources: []string{"podgroups"}},
		"PodGroup updates are denied by the test")
	ctx := context.Background()
	// The policy takes effect once the API server's informers saw it:
	// probe with a scratch PodGroup until an update is refused.
	probe := &volcanov1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Name: "probe", Namespace: w.NS}, Spec: volcanov1beta1.PodGroupSpec{MinMember: 1}}
	if err := w.Client.Create(ctx, probe); err != nil {
		w.T.Fatal(err)
	}
	w.Eventually("the policy to refuse PodGroup updates", func() (bool, error) {
		probe.Spec.MinMember++
		err := w.Client.Update(ctx, probe)
		if err == nil {
			return false, nil
		}
		return strings.Contains(err.Error(), "denied"), err
	})
	return remove
}
