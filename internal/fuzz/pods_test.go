package fuzz

import (
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// checkPods: a Pod built from a template that is valid on its own must be
// valid too. Templates that are already invalid are the user's problem
// (the API server refuses their Pods) and are skipped.
func checkPods(t *testing.T, rc *rayv1.RayCluster, objs []client.Object) {
	t.Helper()
	templates := map[string]corev1.PodTemplateSpec{"headgroup": rc.Spec.HeadGroupSpec.Template}
	for _, g := range rc.Spec.WorkerGroupSpecs {
		templates[g.GroupName] = g.Template
	}
	for _, obj := range objs {
		pod, ok := obj.(*corev1.Pod)
		if !ok {
			continue
		}
		template, ok := templates[pod.Labels[rayv1.LabelGroup]]
		if !ok || podProblems(templatePod(template)) != nil || autoscalerProblems(rc) != nil {
			continue
		}
		if err := podProblems(pod); err != nil {
			t.Fatalf("a valid template gave an invalid Pod %s: %v", pod.GenerateName+pod.Name, err)
		}
	}
}

// autoscalerProblems checks the user's autoscalerOptions the way the API
// server will check the autoscaler container made from them: env names,
// and mounts of volumes the head template has.
func autoscalerProblems(rc *rayv1.RayCluster) error {
	o := rc.Spec.AutoscalerOptions
	if o == nil {
		return nil
	}
	volumes := map[string]bool{}
	for _, v := range rc.Spec.HeadGroupSpec.Template.Spec.Volumes {
		volumes[v.Name] = true
	}
	c := corev1.Container{Name: "autoscaler", Image: "x", Env: o.Env, VolumeMounts: o.VolumeMounts}
	return errors.Join(containerProblems(&c, volumes)...)
}
