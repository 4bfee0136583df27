package fuzz

import (
	"errors"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/clusterowner"
	"github.com/ray-operator/ray-operator/internal/dashboard"
	"github.com/ray-operator/ray-operator/internal/submitter"
	"github.com/ray-operator/ray-operator/internal/validation"
)

// FuzzRayJob: an accepted RayJob converts its runtime env, makes its
// submit request (HTTPMode), its cluster (which builds like any accepted
// cluster), its submit command, submitter Job or sidecar, all twice alike.
func FuzzRayJob(f *testing.F) {
	fuzzAccepted(f, rayv1.KindRayJob, func(job *rayv1.RayJob) error {
		return errors.Join(validation.RayJobMetadata(job.ObjectMeta), validation.RayJobSpec(&job.Spec, job.Annotations, gates))
	}, func(t *testing.T, job *rayv1.RayJob) {
		first, second := buildJob(t, job), buildJob(t, job)
		if !equality.Semantic.DeepEqual(first, second) {
			t.Fatal("building a RayJob twice gave different objects")
		}
	})
}

// jobBuild is everything built for a RayJob.
type jobBuild struct {
	RuntimeEnv string
	Request    *dashboard.JobSubmitRequest
	Cluster    *rayv1.RayCluster
	Command    []string
	Submitter  any
}

func buildJob(t *testing.T, in *rayv1.RayJob) jobBuild {
	t.Helper()
	job := in.DeepCopy()
	job.Status.JobID = job.Name + "-abcde"
	job.Status.DashboardURL = "rc-head-svc.default.svc.cluster.local:8265"
	var b jobBuild
	var err error
	if b.RuntimeEnv, err = submitter.RuntimeEnvJSON(job.Spec.RuntimeEnvYAML); err != nil {
		t.Fatalf("an accepted RayJob's runtimeEnvYAML does not convert: %v", err)
	}
	if b.Request, err = dashboard.NewJobSubmitRequest(job); err != nil {
		t.Fatalf("an accepted RayJob makes no submit request: %v", err)
	}
	if job.Spec.RayClusterSpec == nil {
		return b
	}
	b.Cluster = clusterowner.Build(job, rayv1.KindRayJob, job.Name+"-abcde", job.Spec.RayClusterSpec)
	if err := validateCluster(b.Cluster); err != nil {
		t.Fatalf("an accepted RayJob makes a cluster that validation refuses: %v", err)
	}
	checkClusterBuilds(t, b.Cluster)
	switch mode := job.Spec.SubmissionMode; mode {
	case rayv1.K8sJobMode, "":
		b.Command, err = submitter.Command(job, rayv1.K8sJobMode, false)
		if err == nil {
			b.Submitter, err = submitter.Job(job, b.Cluster)
		}
	case rayv1.SidecarMode:
		b.Command, err = submitter.Command(job, mode, false)
		if err == nil {
			b.Submitter, err = submitter.SidecarContainer(job, b.Cluster, false)
		}
	}
	if err != nil {
		t.Fatalf("an accepted RayJob does not build its submitter: %v", err)
	}
	return b
}
