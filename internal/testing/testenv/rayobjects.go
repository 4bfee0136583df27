package testenv

import (
	"context"
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// RayCluster reads a RayCluster of the namespace; nil when there is none.
func (w *World) RayCluster(name string) *rayv1.RayCluster {
	w.T.Helper()
	return GetOrNil(w, name, &rayv1.RayCluster{})
}

// RayJob reads a RayJob of the namespace; nil when there is none.
func (w *World) RayJob(name string) *rayv1.RayJob {
	w.T.Helper()
	return GetOrNil(w, name, &rayv1.RayJob{})
}

// WaitRayJob waits for the RayJob to reach a deployment status and returns
// it.
func (w *World) WaitRayJob(name string, status rayv1.JobDeploymentStatus) *rayv1.RayJob {
	w.T.Helper()
	var job *rayv1.RayJob
	w.Eventually(fmt.Sprintf("RayJob %s to be %q", name, status), func() (bool, error) {
		if job = w.RayJob(name); job == nil {
			return false, fmt.Errorf("RayJob %s is gone", name)
		}
		return job.Status.JobDeploymentStatus == status, fmt.Errorf("status %q reason %q: %s",
			job.Status.JobDeploymentStatus, job.Status.Reason, job.Status.Message)
	})
	return job
}

// RayJobCluster waits until the RayJob names its RayCluster and that
// exists, and returns it.
func (w *World) RayJobCluster(jobName string) *rayv1.RayCluster {
	w.T.Helper()
	var cluster *rayv1.RayCluster
	w.Eventually("the RayCluster of "+jobName, func() (bool, error) {
		job := w.RayJob(jobName)
		if job == nil || job.Status.RayClusterName == "" {
			return false, nil
		}
		cluster = w.RayCluster(job.Status.RayClusterName)
		return cluster != nil, nil
	})
	return cluster
}

// FinishJob plays the Job controller for the batch Job name (a RayJob's
// submitter): it completes, or fails for good when succeeded is false, as
// FinishJob writes it.
func (w *World) FinishJob(name string, succeeded bool) {
	w.T.Helper()
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: w.NS}}
	w.Eventually("the Job "+name+" to finish", func() (bool, error) {
		err := FinishJob(context.Background(), w.Client, job, succeeded, time.Now())
		return err == nil, err
	})
}
