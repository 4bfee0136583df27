package webhooks_test

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/testing/wrappers"
)

func (w *world) meta(name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: w.ns}
}

// rayCluster is a valid RayCluster with one worker group per name given.
func (w *world) rayCluster(name string, groups ...string) *rayv1.RayCluster {
	spec := wrappers.MakeRayClusterSpec()
	spec.WorkerGroupSpecs = nil
	for _, g := range groups {
		spec.WorkerGroup(g, 1, 0, 2)
	}
	return &rayv1.RayCluster{ObjectMeta: w.meta(name), Spec: *spec.Obj()}
}

func (w *world) rayJob(name string) *rayv1.RayJob {
	return &rayv1.RayJob{ObjectMeta: w.meta(name), Spec: rayv1.RayJobSpec{
		Entrypoint: "python -c 'print(1)'", RayClusterSpec: wrappers.MakeRayClusterSpec().Obj(),
	}}
}

// rayService is a valid RayService, with timeout as its
// ray.io/initializing-timeout annotation when not empty.
func (w *world) rayService(name, timeout string) *rayv1.RayService {
	rs := &rayv1.RayService{ObjectMeta: w.meta(name), Spec: rayv1.RayServiceSpec{RayClusterSpec: *wrappers.MakeRayClusterSpec().Obj()}}
	if timeout != "" {
		rs.Annotations = map[string]string{rayv1.AnnotationInitializingTimeout: timeout}
	}
	return rs
}

// rayCronJob is a RayCronJob; without a cluster its jobTemplate is invalid
// ("one of RayClusterSpec or ClusterSelector must be set").
func (w *world) rayCronJob(name, schedule string, withCluster bool) *rayv1.RayCronJob {
	job := rayv1.RayJobSpec{Entrypoint: "python -c 'print(1)'", ShutdownAfterJobFinishes: true, TTLSecondsAfterFinished: 60}
	if withCluster {
		job.RayClusterSpec = wrappers.MakeRayClusterSpec().Obj()
	}
	return &rayv1.RayCronJob{ObjectMeta: w.meta(name), Spec: rayv1.RayCronJobSpec{Schedule: schedule, JobTemplate: job, Suspend: true}}
}
