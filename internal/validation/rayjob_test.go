package validation

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/features"
	"github.com/ray-operator/ray-operator/internal/testing/wrappers"
)

// jobOption changes a test RayJob.
type jobOption func(*rayv1.RayJob)

// rayJob is wrappers.MakeRayJob's RayJob changed by opts.
func rayJob(opts ...jobOption) *rayv1.RayJob {
	job := wrappers.MakeRayJob("job", "ns").Obj()
	for _, o := range opts {
		o(job)
	}
	return job
}

func mode(m rayv1.JobSubmissionMode) jobOption {
	return func(j *rayv1.RayJob) { j.Spec.SubmissionMode = m }
}

func selector(j *rayv1.RayJob) {
	j.Spec.ClusterSelector = map[string]string{rayv1.ClusterSelectorKey: "c"}
}

func shutdown(ttl int32) jobOption {
	return func(j *rayv1.RayJob) { j.Spec.ShutdownAfterJobFinishes, j.Spec.TTLSecondsAfterFinished = true, ttl }
}

func rules(rs ...rayv1.DeletionRule) jobOption {
	return func(j *rayv1.RayJob) { j.Spec.DeletionStrategy = &rayv1.DeletionStrategy{DeletionRules: rs} }
}

func onJobStatus(s rayv1.JobStatus, policy rayv1.DeletionPolicyType, ttl int32) rayv1.DeletionRule {
	return rayv1.DeletionRule{Policy: policy, Condition: rayv1.DeletionCondition{JobStatus: ptr.To(s), TTLSeconds: ttl}}
}

func legacy(onSuccess, onFailure rayv1.DeletionPolicyType, ttl int32) jobOption {
	return func(j *rayv1.RayJob) {
		j.Spec.DeletionStrategy = &rayv1.DeletionStrategy{
			OnSuccess: &rayv1.DeletionPolicy{Policy: ptr.To(onSuccess)},
			OnFailure: &rayv1.DeletionPolicy{Policy: ptr.To(onFailure)},
		}
		j.Spec.ShutdownAfterJobFinishes, j.Spec.TTLSecondsAfterFinished = ttl > 0, ttl
	}
}

// validateRayJob runs the three RayJob layers in the order the RayJob
// controller runs them.
func validateRayJob(job *rayv1.RayJob, gates FeatureGates) error {
	if err := RayJobMetadata(job.ObjectMeta); err != nil {
		return err
	}
	if err := RayJobSpec(&job.Spec, job.Annotations, gates); err != nil {
		return err
	}
	return RayJobStatus(job)
}

func TestValidateRayJob(t *testing.T) {
	tests := map[string]struct {
		job     *rayv1.RayJob
		gateOff bool
		want    string // a part of the message; empty means valid
	}{
		"valid":                        {job: rayJob()},
		"name too long":                {job: rayJob(func(j *rayv1.RayJob) { j.Name = strings.Repeat("a", 48) }), want: "no more than 47 characters"},
		"name not DNS1035":             {job: rayJob(func(j *rayv1.RayJob) { j.Name = "1job" }), want: "valid DNS1035 label"},
		"suspend needs shutdown":       {job: rayJob(func(j *rayv1.RayJob) { j.Spec.Suspend = true }), want: "not allowed to be suspended"},
		"TTL needs shutdown":           {job: rayJob(func(j *rayv1.RayJob) { j.Spec.TTLSecondsAfterFinished = 10 }), want: "cannot have TTLSecondsAfterFinished"},
		"no cluster spec nor selector": {job: rayJob(func(j *rayv1.RayJob) { j.Spec.RayClusterSpec = nil }), want: "one of RayClusterSpec or ClusterSelector"},
		"selector without a name":      {job: rayJob(func(j *rayv1.RayJob) { j.Spec.ClusterSelector = map[string]string{"x": "y"} }), want: "should not be empty"},
		"selector with suspend": {job: rayJob(selector, func(j *rayv1.RayJob) { j.Spec.Suspend, j.Spec.ShutdownAfterJobFinishes = true, true }),
			want: "doesn't support the suspend operation"},
		"selector with backoffLimit": {job: rayJob(selector, func(j *rayv1.RayJob) { j.Spec.BackoffLimit = ptr.To[int32](1) }), want: "incompatible with ClusterSelector"},
		"selector in SidecarMode":    {job: rayJob(selector, mode(rayv1.SidecarMode)), want: "not supported in SidecarMode"},
		"selector, mode unset":       {job: rayJob(selector, mode(""))},
		"interactive with backoffLimit": {job: rayJob(mode(rayv1.InteractiveMode), func(j *rayv1.RayJob) { j.Spec.BackoffLimit = ptr.To[int32](1) }),
			want: "incompatible with InteractiveMode"},
		"sidecar with submitter template": {job: rayJob(mode(rayv1.SidecarMode), func(j *rayv1.RayJob) { j.Spec.SubmitterPodTemplate = &corev1.PodTemplateSpec{} }),
			want: "doesn't support SubmitterPodTemplate"},
		"sidecar with restartable head": {job: rayJob(mode(rayv1.SidecarMode), func(j *rayv1.RayJob) {
			j.Spec.RayClusterSpec.HeadGroupSpec.Template.Spec.RestartPolicy = corev1.RestartPolicyAlways
		}), want: "should be Never or unset"},
		"bad cluster spec": {job: rayJob(func(j *rayv1.RayJob) { j.Spec.RayClusterSpec.HeadGroupSpec.Template.Spec.Containers = nil }),
			want: "The RayJob spec is invalid:"},
		"K8s token auth": {job: rayJob(func(j *rayv1.RayJob) {
			j.Spec.RayClusterSpec.AuthOptions = &rayv1.AuthOptions{EnableK8sTokenAuth: ptr.To(true)}
		}), want: "K8s token auth mode is currently not supported"},
		"upgradeStrategy on the RayJob's cluster": {job: rayJob(func(j *rayv1.RayJob) {
			j.Spec.RayClusterSpec.UpgradeStrategy = &rayv1.RayClusterUpgradeStrategy{Type: ptr.To(rayv1.RayClusterRecreate)}
		}), want: "The RayJob spec is invalid: upgradeStrategy cannot be set when RayCluster is created by RayJob"},
		"upgradeStrategy without a type": {job: rayJob(func(j *rayv1.RayJob) {
			j.Spec.RayClusterSpec.UpgradeStrategy = &rayv1.RayClusterUpgradeStrategy{}
		})},
		"bad runtime env": {job: rayJob(func(j *rayv1.RayJob) { j.Spec.RuntimeEnvYAML = "a: [" }), want: "runtimeEnvYAML"},
		"metadata with an unreadable rayVersion (found by FuzzRayJob)": {job: rayJob(func(j *rayv1.RayJob) {
			j.Spec.Metadata, j.Spec.RayClusterSpec.RayVersion = map[string]string{"team": "a"}, "0"
		}), want: "failed to parse Ray version: 0"},
		"metadata before Ray 2.6.0": {job: rayJob(func(j *rayv1.RayJob) {
			j.Spec.Metadata, j.Spec.RayClusterSpec.RayVersion = map[string]string{"team": "a"}, "2.5.1"
		}), want: "must be at least 2.6.0 to use the metadata field"},
		"metadata with Ray 2.6.0": {job: rayJob(func(j *rayv1.RayJob) {
			j.Spec.Metadata, j.Spec.RayClusterSpec.RayVersion = map[string]string{"team": "a"}, "2.6.0"
		})},
		"metadata before Ray 2.6.0 in SidecarMode": {job: rayJob(func(j *rayv1.RayJob) {
			j.Spec.Metadata, j.Spec.RayClusterSpec.RayVersion = map[string]string{"team": "a"}, "2.5.1"
			j.Spec.SubmissionMode = rayv1.SidecarMode
		}), want: "must be at least 2.6.0 to use the metadata field"},
		"metadata before Ray 2.6.0 in HTTPMode (the REST body has it from 2.0.0)": {job: rayJob(func(j *rayv1.RayJob) {
			j.Spec.Metadata, j.Spec.RayClusterSpec.RayVersion = map[string]string{"team": "a"}, "2.5.1"
			j.Spec.SubmissionMode = rayv1.HTTPMode
		})},
		"metadata with an unreadable rayVersion in InteractiveMode": {job: rayJob(func(j *rayv1.RayJob) {
			j.Spec.Metadata, j.Spec.RayClusterSpec.RayVersion = map[string]string{"team": "a"}, "0"
			j.Spec.SubmissionMode = rayv1.InteractiveMode
		})},
		"non-positive deadline":   {job: rayJob(func(j *rayv1.RayJob) { j.Spec.ActiveDeadlineSeconds = ptr.To[int32](0) }), want: "activeDeadlineSeconds must be a positive"},
		"non-positive preRunning": {job: rayJob(func(j *rayv1.RayJob) { j.Spec.PreRunningDeadlineSeconds = ptr.To[int32](0) }), want: "preRunningDeadlineSeconds must be a positive"},
		"negative backoffLimit":   {job: rayJob(func(j *rayv1.RayJob) { j.Spec.BackoffLimit = ptr.To[int32](-1) }), want: "backoffLimit must be a positive"},
		"strategy needs the gate": {job: rayJob(rules(onJobStatus(rayv1.JobStatusSucceeded, rayv1.DeleteCluster, 0))), gateOff: true,
			want: "feature gate must be enabled"},
		"rules with shutdown": {job: rayJob(shutdown(0), rules(onJobStatus(rayv1.JobStatusSucceeded, rayv1.DeleteCluster, 0))),
			want: "mutually exclusive"},
		"empty strategy": {job: rayJob(func(j *rayv1.RayJob) { j.Spec.DeletionStrategy = &rayv1.DeletionStrategy{} }), want: "requires either BOTH"},
		"legacy without onFailure": {job: rayJob(func(j *rayv1.RayJob) {
			j.Spec.DeletionStrategy = &rayv1.DeletionStrategy{OnSuccess: &rayv1.DeletionPolicy{Policy: ptr.To(rayv1.DeleteCluster)}}
		}), want: "both DeletionStrategy.OnSuccess and DeletionStrategy.OnFailure"},
		"legacy DeleteCluster with selector": {job: rayJob(func(j *rayv1.RayJob) { j.Spec.RayClusterSpec = nil }, selector, legacy(rayv1.DeleteCluster, rayv1.DeleteNone, 0)),
			want: "doesn't support DeletionStrategy=DeleteCluster on success"},
		"legacy DeleteNone with shutdown": {job: rayJob(legacy(rayv1.DeleteCluster, rayv1.DeleteNone, 10)), want: "deletion policy is 'DeleteNone'"},
		"duplicate rule": {job: rayJob(rules(onJobStatus(rayv1.JobStatusSucceeded, rayv1.DeleteCluster, 0), onJobStatus(rayv1.JobStatusSucceeded, rayv1.DeleteCluster, 5))),
			want: "duplicate rule"},
		"TTLs against the deletion order": {job: rayJob(rules(onJobStatus(rayv1.JobStatusSucceeded, rayv1.DeleteWorkers, 50), onJobStatus(rayv1.JobStatusSucceeded, rayv1.DeleteCluster, 10))),
			want: "DeleteCluster TTL (10) must be >= DeleteWorkers TTL (50)"},
		"rule with both conditions": {job: rayJob(rules(rayv1.DeletionRule{Policy: rayv1.DeleteCluster, Condition: rayv1.DeletionCondition{
			JobStatus: ptr.To(rayv1.JobStatusFailed), JobDeploymentStatus: ptr.To(rayv1.JobDeploymentStatusFailed)}})),
			want: "cannot set both"},
		"DeleteWorkers with autoscaling": {job: rayJob(func(j *rayv1.RayJob) { j.Spec.RayClusterSpec.EnableInTreeAutoscaling = ptr.To(true) },
			rules(onJobStatus(rayv1.JobStatusSucceeded, rayv1.DeleteWorkers, 0))), want: "not supported with autoscaling"},
		"Waiting outside InteractiveMode": {job: rayJob(func(j *rayv1.RayJob) { j.Status.JobDeploymentStatus = rayv1.JobDeploymentStatusWaiting }),
			want: "cannot be `Waiting`"},
		"Waiting in InteractiveMode": {job: rayJob(mode(rayv1.InteractiveMode), func(j *rayv1.RayJob) { j.Status.JobDeploymentStatus = rayv1.JobDeploymentStatusWaiting })},
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
