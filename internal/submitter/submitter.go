// Package submitter builds what submits a RayJob's entrypoint to its Ray
// cluster: the batch Job of K8sJobMode, the head-Pod container of SidecarMode
// and the HTTP request of HTTPMode. Its functions are pure: no client, no
// environment, no clock.
package submitter

import (
	"maps"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/naming"
	"github.com/ray-operator/ray-operator/internal/raypod"
)

// ContainerName names the submitter container, in the batch Job's Pod as in
// the head Pod of SidecarMode.
const ContainerName = "ray-job-submitter"

// DefaultBackoffLimit is the submitter Job's backoffLimit unless
// spec.submitterConfig sets one: three attempts ride out a transient network
// failure without retrying a broken entrypoint for long.
const DefaultBackoffLimit int32 = 2

// Environment variables the submitter container receives, so that a custom
// submitter command can reach the dashboard and reuse the submission id.
const (
	EnvPythonUnbuffered = "PYTHONUNBUFFERED"
	EnvDashboardAddress = "RAY_DASHBOARD_ADDRESS"
	EnvJobSubmissionID  = "RAY_JOB_SUBMISSION_ID"
)

// Auth settings of token-protected clusters.
const (
	envAuthMode  = "RAY_AUTH_MODE"
	envAuthToken = "RAY_AUTH_TOKEN"
	// AuthTokenSecretKey is the key of the token in a cluster's auth Secret:
	// the key the Ray Pods read it from.
	AuthTokenSecretKey = raypod.AuthTokenSecretKey
)

// originatedFromCRD is the value of the originated-from-crd label on objects
// made for a RayJob.
const originatedFromCRD = "RayJob"

// shell runs the joined command with -e, so that a failing step fails the
// container instead of being ignored.
var shell = []string{"/bin/bash", "-ce", "--"}

// Job returns the submitter batch Job of a RayJob in K8sJobMode. It has the
// RayJob's name and namespace; the caller sets the owner reference. The Pod
// template is the user's spec.submitterPodTemplate when given, else a default
// one running the head image.
func Job(job *rayv1.RayJob, cluster *rayv1.RayCluster) (*batchv1.Job, error) {
	template := PodTemplate(job, &cluster.Spec)
	if err := configure(&template.Spec.Containers[rayv1.RayContainerIndex], job, cluster, rayv1.K8sJobMode, false); err != nil {
		return nil, err
	}
	backoffLimit := DefaultBackoffLimit
	if job.Spec.SubmitterConfig != nil && job.Spec.SubmitterConfig.BackoffLimit != nil {
		backoffLimit = *job.Spec.SubmitterConfig.BackoffLimit
	}
	// The submitter Pod carries the RayJob's identity too, as in KubeRay:
	// the head's NetworkPolicy admits it by these labels.
	if template.Labels == nil {
		template.Labels = map[string]string{}
	}
	maps.Copy(template.Labels, identityLabels(job))
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{
			Name:      job.Name,
			Namespace: job.Namespace,
			Labels:    identityLabels(job),
		},
		Spec: batchv1.JobSpec{
			BackoffLimit: ptr.To(backoffLimit),
			Template:     template,
		},
	}, nil
}

// identityLabels are the labels of the submitter Job and its Pod: the
// RayJob they run for, and the operator.
func identityLabels(job *rayv1.RayJob) map[string]string {
	return map[string]string{
		rayv1.LabelOriginatedFromCRName: job.Name,
		rayv1.LabelOriginatedFromCRD:    originatedFromCRD,
		rayv1.LabelCreatedBy:            rayv1.CreatedByOperator,
	}
}

// SidecarContainer returns the submitter container SidecarMode appends to the
// head Pod of cluster. It always runs the generated command.
//
// With restartOnFailure (the SidecarSubmitterRestart gate) the container has
// restartPolicy OnFailure: in the head Pod, whose policy is Never, the kubelet
// (Kubernetes 1.35+, ContainerRestartRules) restarts only this container after
// a non-zero exit, for example when `ray job logs --follow` loses its
// connection, and the command checks `ray job status` before submitting, so
// the restarted container follows the running job instead of submitting it
// again.
func SidecarContainer(job *rayv1.RayJob, cluster *rayv1.RayCluster, restartOnFailure bool) (corev1.Container, error) {
	container := DefaultContainer(&cluster.Spec)
	if err := configure(&container, job, cluster, rayv1.SidecarMode, restartOnFailure); err != nil {
		return corev1.Container{}, err
	}
	if restartOnFailure {
		container.RestartPolicy = ptr.To(corev1.ContainerRestartPolicyOnFailure)
	}
	return container, nil
}

// PodTemplate returns a copy of the user's submitter Pod template, or the
// default one.
func PodTemplate(job *rayv1.RayJob, clusterSpec *rayv1.RayClusterSpec) corev1.PodTemplateSpec {
	if job.Spec.SubmitterPodTemplate != nil && len(job.Spec.SubmitterPodTemplate.Spec.Containers) > 0 {
		template := *job.Spec.SubmitterPodTemplate.DeepCopy()
		// A batch Job accepts only Never or OnFailure; unset would be refused.
		if template.Spec.RestartPolicy == "" {
			template.Spec.RestartPolicy = corev1.RestartPolicyNever
		}
		return template
	}
	return corev1.PodTemplateSpec{
		Spec: corev1.PodSpec{
			Containers:    []corev1.Container{DefaultContainer(clusterSpec)},
			RestartPolicy: corev1.RestartPolicyNever,
		},
	}
}

// DefaultContainer is a small container running the head's image, so that the
// Ray CLI matches the cluster's version.
func DefaultContainer(clusterSpec *rayv1.RayClusterSpec) corev1.Container {
	image := ""
	if clusterSpec != nil && len(clusterSpec.HeadGroupSpec.Template.Spec.Containers) > 0 {
		image = clusterSpec.HeadGroupSpec.Template.Spec.Containers[rayv1.RayContainerIndex].Image
	}
	return corev1.Container{
		Name:  ContainerName,
		Image: image,
		Resources: corev1.ResourceRequirements{
			Limits: corev1.ResourceList{
				corev1.ResourceCPU:    resource.MustParse("1"),
				corev1.ResourceMemory: resource.MustParse("1Gi"),
			},
			Requests: corev1.ResourceList{
				corev1.ResourceCPU:    resource.MustParse("500m"),
				corev1.ResourceMemory: resource.MustParse("200Mi"),
			},
		},
	}
}

// configure sets the submitter command (unless a K8sJobMode user template
// brings its own) and the environment every submitter gets, including the
// auth token when the cluster requires one.
func configure(container *corev1.Container, job *rayv1.RayJob, cluster *rayv1.RayCluster, mode rayv1.JobSubmissionMode, sidecarRestarts bool) error {
	if len(container.Command) == 0 || mode == rayv1.SidecarMode {
		cmd, err := Command(job, mode, sidecarRestarts)
		if err != nil {
			return err
		}
		container.Command = append([]string(nil), shell...)
		container.Args = []string{strings.Join(cmd, " ")}
	}
	container.Env = append(container.Env,
		corev1.EnvVar{Name: EnvPythonUnbuffered, Value: "1"},
		corev1.EnvVar{Name: EnvDashboardAddress, Value: job.Status.DashboardURL},
		corev1.EnvVar{Name: EnvJobSubmissionID, Value: job.Status.JobID},
	)
	if rayv1.IsAuthEnabled(&cluster.Spec) {
		container.Env = append(container.Env, authEnv(cluster)...)
	}
	return nil
}

// authEnv makes the Ray CLI send the cluster's token, read from its auth
// Secret.
func authEnv(cluster *rayv1.RayCluster) []corev1.EnvVar {
	return []corev1.EnvVar{
		{Name: envAuthMode, Value: string(rayv1.AuthModeToken)},
		{Name: envAuthToken, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: naming.AuthSecretName(cluster)},
			Key:                  AuthTokenSecretKey,
		}}},
	}
}
