package kaischeduler_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/batchscheduler"
	"github.com/ray-operator/ray-operator/internal/batchscheduler/kaischeduler"
	"github.com/ray-operator/ray-operator/internal/testing/wrappers"
)

func TestSubmission(t *testing.T) {
	for name, c := range map[string]struct {
		obj    client.Object
		reject bool
	}{
		"RayCluster":          {wrappers.MakeRayCluster("c", "ns").Obj(), false},
		"K8sJobMode RayJob":   {wrappers.MakeRayJob("j", "ns").Obj(), true},
		"default mode RayJob": {wrappers.MakeRayJob("j", "ns").Mode("").Obj(), true},
		"SidecarMode RayJob":  {wrappers.MakeRayJob("j", "ns").Mode(rayv1.SidecarMode).Obj(), false},
		"HTTPMode RayJob":     {wrappers.MakeRayJob("j", "ns").Mode(rayv1.HTTPMode).Obj(), false},
		"InteractiveMode":     {wrappers.MakeRayJob("j", "ns").Mode(rayv1.InteractiveMode).Obj(), false},
	} {
		t.Run(name, func(t *testing.T) {
			err := kaischeduler.Scheduler{}.DoBatchSchedulingOnSubmission(t.Context(), c.obj)
			if c.reject != batchscheduler.IsRejected(err) || !c.reject && err != nil {
				t.Errorf("err = %v, want rejected %v", err, c.reject)
			}
		})
	}
}

func TestAddMetadata(t *testing.T) {
	pod := &corev1.Pod{}
	kaischeduler.Scheduler{}.AddMetadataToChildResource(t.Context(), wrappers.MakeRayCluster("c", "ns").Label(kaischeduler.LabelQueue, "team-a").Obj(), pod, "small")
	want := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"kai.scheduler/queue": "team-a"}}, Spec: corev1.PodSpec{SchedulerName: "kai-scheduler"}}
	if diff := cmp.Diff(want, pod); diff != "" {
		t.Errorf("Pod (-want +got):\n%s", diff)
	}
	pod = &corev1.Pod{}
	kaischeduler.Scheduler{}.AddMetadataToChildResource(t.Context(), wrappers.MakeRayCluster("c", "ns").Obj(), pod, "small")
	if pod.Spec.SchedulerName != "kai-scheduler" || len(pod.Labels) != 0 {
		t.Errorf("without a queue: %+v", pod)
	}
}
