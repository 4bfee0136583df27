package rayjob

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/features"
)

func TestValidateRayJob(t *testing.T) {
	selector := func(j *rayv1.RayJob) { j.Spec.ClusterSelector = map[string]string{"ray.io/cluster": "c"} }
	tests := map[string]struct {
		job     *rayv1.RayJob
		gateOff bool
		want    string // a part of the message; empty means valid
	}{
		"valid":                        {job: makeJob()},
		"name too long":                {job: makeJob(func(j *rayv1.RayJob) { j.Name = strings.Repeat("a", 48) }), want: "no more than 47 characters"},
		"name not DNS1035":             {job: makeJob(func(j *rayv1.RayJob) { j.Name = "1job" }), want: "valid DNS1035 label"},
		"suspend needs shutdown":       {job: makeJob(func(j *rayv1.RayJob) { j.Spec.Suspend = true }), want: "not allowed to be suspended"},
		"TTL needs shutdown":           {job: makeJob(func(j *rayv1.RayJob) { j.Spec.TTLSecondsAfterFinished = 10 }), want: "cannot have TTLSecondsAfterFinished"},
		"no cluster spec nor selector": {job: makeJob(func(j *rayv1.RayJob) { j.Spec.RayClusterSpec = nil }), want: "one of RayClusterSpec or ClusterSelector"},
		"selector without a name":      {job: makeJob(func(j *rayv1.RayJob) { j.Spec.ClusterSelector = map[string]string{"x": "y"} }), want: "should not be empty"},
		"selector with suspend": {job: makeJob(selector, func(j *rayv1.RayJob) { j.Spec.Suspend, j.Spec.ShutdownAfterJobFinishes = true, true }),
			want: "doesn't support the suspend operation"},
		"selector with backoffLimit": {job: makeJob(selector, func(j *rayv1.RayJob) { j.Spec.BackoffLimit = ptr.To[int32](1) }), want: "incompatible with ClusterSelector"},
		"selector in SidecarMode":    {job: makeJob(selector, mode(rayv1.SidecarMode)), want: "not supported in SidecarMode"},
		"interactive with backoffLimit": {job: makeJob(mode(rayv1.InteractiveMode), func(j *rayv1.RayJob) { j.Spec.BackoffLimit = ptr.To[int32](1) }),
			want: "incompatible with InteractiveMode"},
		"sidecar with submitter template": {job: makeJob(mode(rayv1.SidecarMode), func(j *rayv1.RayJob) { j.Spec.SubmitterPodTemplate = &corev1.PodTemplateSpec{} }),
			want: "doesn't support SubmitterPodTemplate"},
		"sidecar with restartable head": {job: makeJob(mode(rayv1.SidecarMode), func(j *rayv1.RayJob) {
			j.Spec.RayClusterSpec.HeadGroupSpec.Template.Spec.RestartPolicy = corev1.RestartPolicyAlways
		}), want: "should be Never or unset"},
		"bad cluster spec": {job: makeJob(func(j *rayv1.RayJob) { j.Spec.RayClusterSpec.HeadGroupSpec.Template.Spec.Containers = nil }),
			want: "The RayJob spec is invalid:"},
		"K8s token auth": {job: makeJob(func(j *rayv1.RayJob) {
			j.Spec.RayClusterSpec.AuthOptions = &rayv1.AuthOptions{EnableK8sTokenAuth: ptr.To(true)}
		}), want: "K8s token auth mode is currently not supported"},
		"upgradeStrategy on the RayJob's cluster": {job: makeJob(func(j *rayv1.RayJob) {
			j.Spec.RayClusterSpec.UpgradeStrategy = &rayv1.RayClusterUpgradeStrategy{Type: ptr.To(rayv1.RayClusterRecreate)}
		}), want: "The RayJob spec is invalid: upgradeStrategy cannot be set when RayCluster is created by RayJob"},
		"upgradeStrategy without a type": {job: makeJob(func(j *rayv1.RayJob) {
			j.Spec.RayClusterSpec.UpgradeStrategy = &rayv1.RayClusterUpgradeStrategy{}
		})},
		"bad runtime env":         {job: makeJob(func(j *rayv1.RayJob) { j.Spec.RuntimeEnvYAML = "a: [" }), want: "runtimeEnvYAML"},
		"non-positive deadline":   {job: makeJob(func(j *rayv1.RayJob) { j.Spec.ActiveDeadlineSeconds = ptr.To[int32](0) }), want: "activeDeadlineSeconds must be a positive"},
		"non-positive preRunning": {job: makeJob(func(j *rayv1.RayJob) { j.Spec.PreRunningDeadlineSeconds = ptr.To[int32](0) }), want: "preRunningDeadlineSeconds must be a positive"},
		"negative backoffLimit":   {job: makeJob(func(j *rayv1.RayJob) { j.Spec.BackoffLimit = ptr.To[int32](-1) }), want: "backoffLimit must be a positive"},
		"strategy needs the gate": {job: makeJob(rules(onJobStatus(rayv1.JobStatusSucceeded, rayv1.DeleteCluster, 0))), gateOff: true,
			want: "feature gate must be enabled"},
		"rules with shutdown": {job: makeJob(shutdown(0), rules(onJobStatus(rayv1.JobStatusSucceeded, rayv1.DeleteCluster, 0))),
			want: "mutually exclusive"},
		"empty strategy": {job: makeJob(func(j *rayv1.RayJob) { j.Spec.DeletionStrategy = &rayv1.DeletionStrategy{} }), want: "requires either BOTH"},
		"legacy without onFailure": {job: makeJob(func(j *rayv1.RayJob) {
			j.Spec.DeletionStrategy = &rayv1.DeletionStrategy{OnSuccess: &rayv1.DeletionPolicy{Policy: ptr.To(rayv1.DeleteCluster)}}
		}), want: "both DeletionStrategy.OnSuccess and DeletionStrategy.OnFailure"},
		"legacy DeleteCluster with selector": {job: makeJob(func(j *rayv1.RayJob) { j.Spec.RayClusterSpec = nil }, selector, legacy(rayv1.DeleteCluster, rayv1.DeleteNone, 0)),
			want: "doesn't support DeletionStrategy=DeleteCluster on success"},
		"legacy DeleteNone with shutdown": {job: makeJob(legacy(rayv1.DeleteCluster, rayv1.DeleteNone, 10)), want: "deletion policy is 'DeleteNone'"},
		"duplicate rule": {job: makeJob(rules(onJobStatus(rayv1.JobStatusSucceeded, rayv1.DeleteCluster, 0), onJobStatus(rayv1.JobStatusSucceeded, rayv1.DeleteCluster, 5))),
			want: "duplicate rule"},
		"TTLs against the deletion order": {job: makeJob(rules(onJobStatus(rayv1.JobStatusSucceeded, rayv1.DeleteWorkers, 50), onJobStatus(rayv1.JobStatusSucceeded, rayv1.DeleteCluster, 10))),
			want: "DeleteCluster TTL (10) must be >= DeleteWorkers TTL (50)"},
		"rule with both conditions": {job: makeJob(rules(rayv1.DeletionRule{Policy: rayv1.DeleteCluster, Condition: rayv1.DeletionCondition{
			JobStatus: ptr.To(rayv1.JobStatusFailed), JobDeploymentStatus: ptr.To(rayv1.JobDeploymentStatusFailed)}})),
			want: "cannot set both"},
		"DeleteWorkers with autoscaling": {job: makeJob(func(j *rayv1.RayJob) { j.Spec.RayClusterSpec.EnableInTreeAutoscaling = ptr.To(true) },
			rules(onJobStatus(rayv1.JobStatusSucceeded, rayv1.DeleteWorkers, 0))), want: "not supported with autoscaling"},
		"Waiting outside InteractiveMode": {job: makeJob(inState(rayv1.JobDeploymentStatusWaiting)), want: "cannot be `Waiting`"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			gate := features.NewGate()
			if err := gate.SetFromMap(map[string]bool{"RayJobDeletionPolicy": !tc.gateOff}); err != nil {
				t.Fatal(err)
			}
			err := validateRayJob(tc.job, gate)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("unexpected error %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}
