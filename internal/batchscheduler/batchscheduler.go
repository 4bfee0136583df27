// Package batchscheduler is the plugin interface between the RayCluster and
// RayJob controllers and a third-party batch scheduler (Volcano, YuniKorn,
// KAI-Scheduler, scheduler-plugins), KubeRay's with its hook points:
//
//   - DoBatchSchedulingOnSubmission: before a RayCluster's Pods are made, and
//     while a RayJob is Initializing (most schedulers create a PodGroup);
//   - AddMetadataToChildResource: on each head and worker Pod (group
//     "headgroup" or the worker group's name), and for a RayJob on its
//     RayCluster (K8sJobMode, group "") and its submitter Pod template
//     (group "submitter");
//   - CleanupOnCompletion: when a RayJob finishes, and when it is suspended
//     or retried, to release what the scheduler still reserves.
//
// As in kueue's job framework, a Scheduler implements only Name; each hook
// is a small capability interface that a plugin implements or not, and the
// package functions Submit, AddMetadata and Cleanup call it when it is
// there. A nil Scheduler (no --batch-scheduler) does nothing.
package batchscheduler

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Labels and annotations several plugins read, KubeRay's.
const (
	// LabelGangSchedulingEnabled on a RayCluster or RayJob turns on gang
	// scheduling for YuniKorn and scheduler-plugins (any value).
	LabelGangSchedulingEnabled = "ray.io/gang-scheduling-enabled"
	// LabelPriorityClassName on a RayCluster or RayJob is the Volcano
	// PodGroup's priorityClassName, and is copied to the Pods.
	LabelPriorityClassName = "ray.io/priority-class-name"
	// HeadGroup is the group name of the head Pod.
	HeadGroup = "headgroup"
	// SubmitterGroup is the group name of a RayJob's submitter Pod.
	SubmitterGroup = "submitter"
)

// Scheduler is a batch scheduler integration. Name is the schedulerName the
// plugin gives the Pods.
type Scheduler interface {
	Name() string
}

// Submitter is a Scheduler that prepares for a RayCluster or a RayJob
// before its Pods exist, typically by creating or resizing a PodGroup. It
// is called again on every pass, so it must be idempotent. An
// *RejectedError says the object cannot be scheduled by this plugin.
type Submitter interface {
	DoBatchSchedulingOnSubmission(ctx context.Context, obj client.Object) error
}

// MetadataAdder is a Scheduler that ties a child of parent to the scheduler
// with labels, annotations and the schedulerName. parent is a RayCluster
// (child: a Pod) or a RayJob (child: its RayCluster or the submitter's
// *corev1.PodTemplateSpec). It makes no API call.
type MetadataAdder interface {
	AddMetadataToChildResource(ctx context.Context, parent, child metav1.Object, groupName string)
}

// CompletionCleaner is a Scheduler that releases what it reserves for a
// RayJob that finished, is suspended or is retried. cleaned says whether it
// changed anything.
type CompletionCleaner interface {
	CleanupOnCompletion(ctx context.Context, obj client.Object) (cleaned bool, err error)
}

// Factory makes a plugin's Scheduler once the manager's client exists.
type Factory interface {
	New(ctx context.Context, cfg *rest.Config, c client.Client) (Scheduler, error)
}

// SchemeAdder is a Factory whose plugin reads or writes its own API types.
type SchemeAdder interface {
	AddToScheme(scheme *runtime.Scheme) error
}

// ReconcilerConfigurer is a Factory whose plugin needs the RayCluster
// controller to watch more (Volcano: the PodGroups it owns).
type ReconcilerConfigurer interface {
	ConfigureReconciler(b *builder.Builder) *builder.Builder
}

// RejectedError is a plugin's refusal of an object it cannot schedule as it
// is: a RayJob using a clusterSelector with Volcano, a K8sJobMode RayJob
// with KAI-Scheduler, a bad Volcano topology label. Only a change of the
// object can help, so controllers report it on the object (event, status)
// instead of retrying it as a failure.
type RejectedError struct {
	// Scheduler is the plugin's name.
	Scheduler string
	// Message says what is not supported.
	Message string
}

func (e *RejectedError) Error() string { return e.Message }

// Rejected returns a *RejectedError of scheduler.
func Rejected(scheduler, format string, args ...any) error {
	return &RejectedError{Scheduler: scheduler, Message: fmt.Sprintf(format, args...)}
}

// IsRejected reports whether err is a plugin's refusal.
func IsRejected(err error) bool {
	var u *RejectedError
	return errors.As(err, &u)
}

// WaitingError says a plugin is waiting for something it started (the
// deletion of an object it must replace) before the object's Pods may be
// made: not a failure, so controllers end the pass and look again instead
// of reporting it.
type WaitingError struct {
	// Scheduler is the plugin's name.
	Scheduler string
	// Message says what the plugin waits for.
	Message string
}

func (e *WaitingError) Error() string { return e.Message }

// Waiting returns a *WaitingError of scheduler.
func Waiting(scheduler, format string, args ...any) error {
	return &WaitingError{Scheduler: scheduler, Message: fmt.Sprintf(format, args...)}
}

// IsWaiting reports whether err is a plugin's wait.
func IsWaiting(err error) bool {
	var w *WaitingError
	return errors.As(err, &w)
}

// Submit runs s's DoBatchSchedulingOnSubmission when it has one.
func Submit(ctx context.Context, s Scheduler, obj client.Object) error {
	if sub, ok := s.(Submitter); ok {
		return sub.DoBatchSchedulingOnSubmission(ctx, obj)
	}
	return nil
}

// AddMetadata runs s's AddMetadataToChildResource when it has one.
func AddMetadata(ctx context.Context, s Scheduler, parent, child metav1.Object, groupName string) {
	if m, ok := s.(MetadataAdder); ok {
		m.AddMetadataToChildResource(ctx, parent, child, groupName)
	}
}

// Cleanup runs s's CleanupOnCompletion when it has one.
func Cleanup(ctx context.Context, s Scheduler, obj client.Object) (bool, error) {
	if c, ok := s.(CompletionCleaner); ok {
		return c.CleanupOnCompletion(ctx, obj)
	}
	return false, nil
}

// SetSchedulerName sets the schedulerName of a Pod or Pod template; other
// children (a RayCluster) have none.
func SetSchedulerName(child metav1.Object, name string) {
	switch c := child.(type) {
	case *corev1.Pod:
		c.Spec.SchedulerName = name
	case *corev1.PodTemplateSpec:
		c.Spec.SchedulerName = name
	}
}

// CopyLabel sets the child's label to the parent's label from, when the
// parent has it with a non-empty value.
func CopyLabel(parent, child metav1.Object, from, to string) {
	v := parent.GetLabels()[from]
	if v == "" {
		return
	}
	labels := child.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[to] = v
	child.SetLabels(labels)
}

// SetAnnotation sets one annotation of obj.
func SetAnnotation(obj metav1.Object, key, value string) {
	annotations := obj.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[key] = value
	obj.SetAnnotations(annotations)
}

// GangSchedulingEnabled reports whether obj has the
// ray.io/gang-scheduling-enabled label.
func GangSchedulingEnabled(obj metav1.Object) bool {
	_, ok := obj.GetLabels()[LabelGangSchedulingEnabled]
	return ok
}
