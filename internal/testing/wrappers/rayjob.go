package wrappers

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// DefaultEntrypoint is the entrypoint of MakeRayJobSpec.
const DefaultEntrypoint = "python main.py"

// MakeRayJobSpec returns a K8sJobMode RayJob spec running DefaultEntrypoint
// on a cluster with one worker group "small" (1 replica, 0 to 2).
func MakeRayJobSpec() *rayv1.RayJobSpec {
	return &rayv1.RayJobSpec{
		Entrypoint:     DefaultEntrypoint,
		SubmissionMode: rayv1.K8sJobMode,
		RayClusterSpec: MakeRayClusterSpec().WorkerGroup("small", 1, 0, 2).Obj(),
	}
}

// RayJobWrapper builds a RayJob.
type RayJobWrapper struct{ rayv1.RayJob }

// MakeRayJob returns a RayJob with UID "uid-<name>", MakeRayJobSpec's spec
// and no status (a RayJob the RayJob controller has not seen yet).
func MakeRayJob(name, namespace string) *RayJobWrapper {
	return &RayJobWrapper{rayv1.RayJob{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, UID: types.UID("uid-" + name)},
		Spec:       *MakeRayJobSpec(),
	}}
}

// Obj returns a copy of the RayJob.
func (w *RayJobWrapper) Obj() *rayv1.RayJob { return w.DeepCopy() }

// Spec replaces the spec with a copy of spec.
func (w *RayJobWrapper) Spec(spec *rayv1.RayJobSpec) *RayJobWrapper {
	w.RayJob.Spec = *spec.DeepCopy()
	return w
}

// Label sets a label.
func (w *RayJobWrapper) Label(key, value string) *RayJobWrapper {
	w.Labels = set(w.Labels, key, value)
	return w
}

// Annotation sets an annotation.
func (w *RayJobWrapper) Annotation(key, value string) *RayJobWrapper {
	w.Annotations = set(w.Annotations, key, value)
	return w
}

// ControlledBy adds a controller owner reference to owner, a ray.io/v1
// object of kind ownerKind.
func (w *RayJobWrapper) ControlledBy(owner metav1.Object, ownerKind string) *RayJobWrapper {
	w.OwnerReferences = append(w.OwnerReferences, *metav1.NewControllerRef(owner, rayv1.GroupVersion.WithKind(ownerKind)))
	return w
}

// Created sets metadata.creationTimestamp.
func (w *RayJobWrapper) Created(at time.Time) *RayJobWrapper {
	w.CreationTimestamp = metav1.Time{Time: at}
	return w
}

// Mode sets spec.submissionMode.
func (w *RayJobWrapper) Mode(mode rayv1.JobSubmissionMode) *RayJobWrapper {
	w.RayJob.Spec.SubmissionMode = mode
	return w
}

// DeploymentStatus sets status.jobDeploymentStatus.
func (w *RayJobWrapper) DeploymentStatus(status rayv1.JobDeploymentStatus) *RayJobWrapper {
	w.Status.JobDeploymentStatus = status
	return w
}

// Finished ends the RayJob at `at`: deployment status Complete with Ray job
// status SUCCEEDED when succeeded, else Failed with FAILED, and EndTime.
func (w *RayJobWrapper) Finished(succeeded bool, at time.Time) *RayJobWrapper {
	w.Status.JobDeploymentStatus, w.Status.JobStatus = rayv1.JobDeploymentStatusFailed, rayv1.JobStatusFailed
	if succeeded {
		w.Status.JobDeploymentStatus, w.Status.JobStatus = rayv1.JobDeploymentStatusComplete, rayv1.JobStatusSucceeded
	}
	w.Status.EndTime = &metav1.Time{Time: at}
	return w
}

// Terminating marks the RayJob as being deleted since at, held by the
// RayJob finalizer (the fake client keeps such objects).
func (w *RayJobWrapper) Terminating(at time.Time) *RayJobWrapper {
	w.DeletionTimestamp = &metav1.Time{Time: at}
	w.Finalizers = append(w.Finalizers, rayv1.RayJobStopJobFinalizer)
	return w
}
