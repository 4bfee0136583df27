// Package yunikorn is the batch scheduler plugin for Apache YuniKorn
// (--batch-scheduler=yunikorn). YuniKorn needs no objects created: Pods run
// with schedulerName yunikorn, the labels applicationId and queue that it
// reads (copied from yunikorn.apache.org/app-id and yunikorn.apache.org/queue
// on the RayCluster or RayJob), and, when the owner has the
// ray.io/gang-scheduling-enabled label, the task groups of the gang in the
// yunikorn.apache.org/task-groups annotation and the Pod's own task group in
// yunikorn.apache.org/task-group-name.
package yunikorn

import (
	"context"
	"encoding/json"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/batchscheduler"
	"github.com/ray-operator/ray-operator/internal/clustersize"
	"github.com/ray-operator/ray-operator/internal/submitter"
)

// Name is the plugin's name in --batch-scheduler and its Pods' schedulerName.
const Name = "yunikorn"

// Labels and annotations, YuniKorn's.
const (
	// LabelApplicationID on a RayCluster or RayJob is the YuniKorn
	// application; Pods get it as LabelPodApplicationID.
	LabelApplicationID = "yunikorn.apache.org/app-id"
	// LabelQueue on a RayCluster or RayJob is the YuniKorn queue; Pods get
	// it as LabelPodQueue.
	LabelQueue = "yunikorn.apache.org/queue"
	// LabelPodApplicationID and LabelPodQueue are the Pod labels YuniKorn
	// reads (the older names, which every YuniKorn version understands).
	LabelPodApplicationID = "applicationId"
	LabelPodQueue         = "queue"
	// AnnotationTaskGroups lists the gang's task groups (JSON).
	AnnotationTaskGroups = "yunikorn.apache.org/task-groups"
	// AnnotationTaskGroupName is the task group of one Pod.
	AnnotationTaskGroupName = "yunikorn.apache.org/task-group-name"
)

// Scheduler decorates Pods; it keeps no state.
type Scheduler struct{}

var _ batchscheduler.MetadataAdder = Scheduler{}

// Name is the Pods' schedulerName.
func (Scheduler) Name() string { return Name }

// AddMetadataToChildResource sets the application, queue and schedulerName
// and, for gang scheduling, the task groups: those the parent carries in its
// own annotation (a RayJob's RayCluster), else those computed from the
// parent, and the child's group unless groupName is empty.
func (Scheduler) AddMetadataToChildResource(ctx context.Context, parent, child metav1.Object, groupName string) {
	batchscheduler.CopyLabel(parent, child, LabelApplicationID, LabelPodApplicationID)
	batchscheduler.CopyLabel(parent, child, LabelQueue, LabelPodQueue)
	batchscheduler.SetSchedulerName(child, Name)
	if !batchscheduler.GangSchedulingEnabled(parent) {
		return
	}
	groups := parent.GetAnnotations()[AnnotationTaskGroups]
	if groups == "" {
		var err error
		if groups, err = TaskGroupsAnnotation(parent); err != nil {
			ctrl.LoggerFrom(ctx).WithName(Name).Error(err, "Not gang scheduling: the task groups cannot be encoded", "object", child.GetName())
			return
		}
	}
	batchscheduler.SetAnnotation(child, AnnotationTaskGroups, groups)
	if groupName != "" {
		batchscheduler.SetAnnotation(child, AnnotationTaskGroupName, groupName)
	}
}

// TaskGroup is one member group of a gang, as YuniKorn's k8s shim decodes
// it from AnnotationTaskGroups.
type TaskGroup struct {
	MinResource               map[string]resource.Quantity      `json:"minResource"`
	NodeSelector              map[string]string                 `json:"nodeSelector,omitempty"`
	Affinity                  *corev1.Affinity                  `json:"affinity,omitempty"`
	Name                      string                            `json:"name"`
	TopologySpreadConstraints []corev1.TopologySpreadConstraint `json:"topologySpreadConstraints,omitempty"`
	Tolerations               []corev1.Toleration               `json:"tolerations,omitempty"`
	MinMember                 int32                             `json:"minMember"`
}

// TaskGroups are the task groups of a RayCluster (the head, then each
// worker group with its minReplicas x numOfHosts Pods) or of a RayJob (those
// of its cluster spec, then the submitter). Other objects have none.
func TaskGroups(obj metav1.Object) []TaskGroup {
	switch o := obj.(type) {
	case *rayv1.RayCluster:
		return clusterTaskGroups(&o.Spec)
	case *rayv1.RayJob:
		if o.Spec.RayClusterSpec == nil {
			return []TaskGroup{}
		}
		template := submitter.PodTemplate(o, o.Spec.RayClusterSpec)
		return append(clusterTaskGroups(o.Spec.RayClusterSpec), taskGroup(batchscheduler.SubmitterGroup, 1, &template.Spec))
	default:
		return []TaskGroup{}
	}
}

// TaskGroupsAnnotation is the AnnotationTaskGroups value of obj.
func TaskGroupsAnnotation(obj metav1.Object) (string, error) {
	data, err := json.Marshal(TaskGroups(obj))
	if err != nil {
		return "", err
	}
	return string(data), nil
}

func clusterTaskGroups(spec *rayv1.RayClusterSpec) []TaskGroup {
	groups := []TaskGroup{taskGroup(batchscheduler.HeadGroup, 1, &spec.HeadGroupSpec.Template.Spec)}
	for i := range spec.WorkerGroupSpecs {
		g := &spec.WorkerGroupSpecs[i]
		groups = append(groups, taskGroup(g.GroupName, clustersize.TimesHosts(clustersize.MinReplicas(g), g), &g.Template.Spec))
	}
	return groups
}

func taskGroup(name string, minMember int32, spec *corev1.PodSpec) TaskGroup {
	res := map[string]resource.Quantity{}
	for k, q := range clustersize.PodResources(spec) {
		res[string(k)] = q
	}
	return TaskGroup{
		Name:         name,
		MinMember:    minMember,
		MinResource:  res,
		NodeSelector: spec.NodeSelector,
		Tolerations:  spec.Tolerations,
		Affinity:     spec.Affinity,
	}
}

// Factory makes the YuniKorn plugin.
type Factory struct{}

var _ batchscheduler.Factory = Factory{}

// New returns the plugin.
func (Factory) New(context.Context, *rest.Config, client.Client) (batchscheduler.Scheduler, error) {
	return Scheduler{}, nil
}
