package raypod

import (
	"errors"
	"maps"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/naming"
	"github.com/ray-operator/ray-operator/internal/ownerref"
)

// podBuild carries one Pod through the build steps shared by head and
// workers. params is a private copy of the group's rayStartParams: KubeRay
// mutates the RayCluster's map in place, this operator never does.
type podBuild struct {
	cluster  *rayv1.RayCluster
	opts     Options
	nodeType rayv1.RayNodeType
	group    string
	params   map[string]string
	fqdn     string
	headPort string
	creator  CreatorKind
	pod      *corev1.Pod
}

// groupSpec is what head and worker groups have in common.
type groupSpec struct {
	template       *corev1.PodTemplateSpec
	rayStartParams map[string]string
	resources      map[string]string
	labels         map[string]string
}

var errNoContainers = errors.New("the Pod template has no containers")

func newPodBuild(cluster *rayv1.RayCluster, opts Options, nodeType rayv1.RayNodeType, group string, spec groupSpec) (*podBuild, error) {
	if len(spec.template.Spec.Containers) == 0 {
		return nil, errNoContainers
	}
	tpl := spec.template.DeepCopy()
	b := &podBuild{
		cluster:  cluster,
		opts:     opts,
		nodeType: nodeType,
		group:    group,
		params:   maps.Clone(spec.rayStartParams),
		fqdn:     naming.HeadServiceFQDN(cluster, opts.ClusterDomain),
		headPort: HeadPort(cluster),
		creator:  creatorOf(cluster),
		pod: &corev1.Pod{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
			ObjectMeta: tpl.ObjectMeta,
			Spec:       tpl.Spec,
		},
	}
	if b.params == nil {
		b.params = map[string]string{}
	}
	b.pod.Namespace = cluster.Namespace
	applyGroupResources(b.params, spec.resources)
	applyGroupLabels(b.params, spec.labels)
	b.pod.Labels = b.podLabels(spec.template.Labels, spec.labels)
	return b, nil
}

func (b *podBuild) rayContainer() *corev1.Container {
	return &b.pod.Spec.Containers[rayv1.RayContainerIndex]
}

// podLabels merges the template labels and the group's Ray labels (group
// labels win) under the operator's own labels, which users cannot override
// for ray.io/node-type, ray.io/group and ray.io/cluster.
func (b *podBuild) podLabels(templateLabels, groupLabels map[string]string) map[string]string {
	labels := map[string]string{
		rayv1.LabelIsRayNode:  rayv1.IsRayNodeValue,
		rayv1.LabelCluster:    b.cluster.Name,
		rayv1.LabelNodeType:   string(b.nodeType),
		rayv1.LabelGroup:      b.group,
		rayv1.LabelIdentifier: naming.Identifier(b.cluster.Name, b.nodeType),
		rayv1.LabelAppName:    rayv1.AppName,
		rayv1.LabelCreatedBy:  rayv1.CreatedByOperator,
	}
	user := maps.Clone(templateLabels)
	if user == nil {
		user = map[string]string{}
	}
	maps.Copy(user, groupLabels)
	for k, v := range b.opts.DefaultPodLabels {
		setIfMissing(user, k, v)
	}
	for k, v := range user {
		if k == rayv1.LabelNodeType || k == rayv1.LabelGroup || k == rayv1.LabelCluster {
			continue
		}
		labels[k] = v
	}
	return labels
}

// initAnnotations makes sure the Pod has an annotation map, adds the
// operator's default annotations and propagates ray.io/overwrite-container-cmd.
func (b *podBuild) initAnnotations() {
	if b.pod.Annotations == nil {
		b.pod.Annotations = map[string]string{}
	}
	for k, v := range b.opts.DefaultPodAnnotations {
		setIfMissing(b.pod.Annotations, k, v)
	}
	if overwritesCommand(b.cluster.Annotations) {
		b.pod.Annotations[rayv1.AnnotationOverwriteContainerCmd] = "true"
	}
}

func overwritesCommand(annotations map[string]string) bool {
	return strings.ToLower(annotations[rayv1.AnnotationOverwriteContainerCmd]) == "true"
}

// addMetricsPort declares the metrics container port for Prometheus unless
// the Ray container already names one "metrics".
func (b *podBuild) addMetricsPort() {
	c := b.rayContainer()
	for _, p := range c.Ports {
		if p.Name == rayv1.MetricsPortName {
			return
		}
	}
	c.Ports = append(c.Ports, corev1.ContainerPort{Name: rayv1.MetricsPortName, ContainerPort: rayv1.DefaultMetricsPort})
}

// finish runs the steps KubeRay's BuildPod runs once the template is
// complete: serve labels, volumes, the container command, environment,
// probes, the owner reference and the batch scheduler hook.
func (b *podBuild) finish() *corev1.Pod {
	b.setServeLabel()
	b.addVolumes()
	resources := b.rayContainer().Resources
	applyContainerResources(b.params, resources)
	startCmd := rayStartCommand(b.nodeType, b.params)
	b.setRayCommand(startCmd)
	b.setInitContainerEnv()
	b.setRayContainerEnv(startCmd)
	if !b.opts.DisableProbesInjection {
		b.setProbes()
	}
	b.pod.OwnerReferences = []metav1.OwnerReference{ownerref.ForCluster(b.cluster)}
	if b.opts.BatchScheduler != nil {
		b.opts.BatchScheduler.MutatePod(b.cluster, b.pod, b.group)
	}
	return b.pod
}

// setServeLabel marks Pods of RayService clusters for the serve Service:
// workers are always eligible (their readiness probe checks the proxy), the
// head starts ineligible and the RayService controller flips it.
func (b *podBuild) setServeLabel() {
	if b.creator != CreatorRayService {
		return
	}
	value := "true"
	if b.nodeType == rayv1.HeadNode {
		value = "false"
	}
	b.pod.Labels[rayv1.LabelServe] = value
}

// setRayCommand replaces the Ray container command with a bash script that
// raises the open-file limit and runs `ray start`, after the user's own
// command if any. It leaves the command alone when the user's command already
// runs `ray start` or the cluster asks to keep it.
func (b *podBuild) setRayCommand(startCmd string) {
	c := b.rayContainer()
	userCmd := joinCommand(c.Command) + joinCommand(c.Args)
	if overwritesCommand(b.pod.Annotations) || strings.Contains(userCmd, "ray start") {
		return
	}
	generated := "ulimit -n ${" + EnvUlimitOpenFiles + ":-65536}; " + startCmd
	if userCmd != "" {
		generated = userCmd + " && " + generated
	}
	c.Command = b.opts.shellCommand()
	c.Args = []string{generated}
}

// joinCommand renders command words the way KubeRay does: each word padded
// with a space on both sides.
func joinCommand(words []string) string {
	var s strings.Builder
	for _, w := range words {
		s.WriteString(" " + w + " ")
	}
	return s.String()
}
