package fuzz

import (
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// podProblems checks the parts of core/v1 Pod validation a builder can get
// wrong: object name, labels and annotations, container, volume and port
// names, env var names, mounts of missing volumes, port ranges. (The full
// validation lives in k8s.io/kubernetes, which this module does not import;
// test/integration/api dry-runs built Pods through a real API server.)
func podProblems(pod *corev1.Pod) error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if pod.Name == "" && pod.GenerateName == "" {
		add("no name and no generateName")
	}
	name := pod.Name
	if name == "" {
		name = strings.TrimSuffix(pod.GenerateName, "-") + "-abcde"
	}
	for _, msg := range validation.IsDNS1123Subdomain(name) {
		add("name %q: %s", name, msg)
	}
	for k, v := range pod.Labels {
		for _, msg := range append(validation.IsQualifiedName(k), validation.IsValidLabelValue(v)...) {
			add("label %q=%q: %s", k, v, msg)
		}
	}
	for k := range pod.Annotations {
		for _, msg := range validation.IsQualifiedName(strings.ToLower(k)) {
			add("annotation %q: %s", k, msg)
		}
	}
	volumes := map[string]bool{}
	for _, v := range pod.Spec.Volumes {
		if volumes[v.Name] {
			add("volume %q twice", v.Name)
		}
		volumes[v.Name] = true
		for _, msg := range validation.IsDNS1123Label(v.Name) {
			add("volume %q: %s", v.Name, msg)
		}
	}
	containers := map[string]bool{}
	all := append(append([]corev1.Container{}, pod.Spec.InitContainers...), pod.Spec.Containers...)
	for i := range all {
		c := &all[i]
		if containers[c.Name] {
			add("container %q twice", c.Name)
		}
		containers[c.Name] = true
		errs = append(errs, containerProblems(c, volumes)...)
	}
	return errors.Join(errs...)
}

func containerProblems(c *corev1.Container, volumes map[string]bool) []error {
	var errs []error
	add := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("container %q: "+format, append([]any{c.Name}, args...)...))
	}
	for _, msg := range validation.IsDNS1123Label(c.Name) {
		add("%s", msg)
	}
	if c.Image == "" {
		add("no image")
	}
	for _, e := range c.Env {
		for _, msg := range validation.IsEnvVarName(e.Name) {
			add("env %q: %s", e.Name, msg)
		}
	}
	ports := map[string]bool{}
	for _, p := range c.Ports {
		if p.ContainerPort < 1 || p.ContainerPort > 65535 {
			add("port %d out of range", p.ContainerPort)
		}
		if p.Name == "" {
			continue
		}
		if ports[p.Name] {
			add("port name %q twice", p.Name)
		}
		ports[p.Name] = true
		for _, msg := range validation.IsValidPortName(p.Name) {
			add("port name %q: %s", p.Name, msg)
		}
	}
	for _, m := range c.VolumeMounts {
		if !volumes[m.Name] {
			add("mounts volume %q, which the Pod lacks", m.Name)
		}
	}
	return errs
}

// templatePod is the Pod a user's template would give on its own, to tell
// invalid input (skipped) from a builder that broke valid input.
func templatePod(t corev1.PodTemplateSpec) *corev1.Pod {
	pod := &corev1.Pod{ObjectMeta: *t.ObjectMeta.DeepCopy(), Spec: *t.Spec.DeepCopy()}
	pod.Name, pod.GenerateName = "", "template-"
	return pod
}

func metaOf(name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: "default", UID: "uid-1"}
}
