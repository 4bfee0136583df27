package rayjob

import (
	"testing"

	"k8s.io/utils/ptr"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// TestExecutionAttempt: attempts are numbered only with BlockingRecreate;
// the number labels the cluster and its Pod templates.
func TestExecutionAttempt(t *testing.T) {
	for name, tc := range map[string]struct {
		strategy *rayv1.RayJobRetryStrategy
		starts   int
		want     *int32
	}{
		"unset":            {nil, 2, nil},
		"Recreate":         {ptr.To(rayv1.RetryRecreate), 2, nil},
		"BlockingRecreate": {ptr.To(rayv1.RetryBlockingRecreate), 3, ptr.To[int32](3)},
	} {
		t.Run(name, func(t *testing.T) {
			job := &rayv1.RayJob{Spec: rayv1.RayJobSpec{RetryStrategy: tc.strategy}}
			for range tc.starts {
				nextExecutionAttempt(job)
			}
			if !ptr.Equal(job.Status.ExecutionAttempt, tc.want) {
				t.Fatalf("executionAttempt = %v, want %v", job.Status.ExecutionAttempt, tc.want)
			}
			cluster := &rayv1.RayCluster{Spec: rayv1.RayClusterSpec{WorkerGroupSpecs: []rayv1.WorkerGroupSpec{{GroupName: "g"}}}}
			labelClusterAttempt(job, cluster)
			want := ""
			if tc.want != nil {
				want = "3"
			}
			for what, l := range map[string]map[string]string{
				"cluster": cluster.Labels, "head": cluster.Spec.HeadGroupSpec.Template.Labels, "worker": cluster.Spec.WorkerGroupSpecs[0].Template.Labels,
			} {
				if got := l[rayv1.LabelExecutionAttempt]; got != want {
					t.Errorf("%s label %q, want %q", what, got, want)
				}
			}
		})
	}
}
