package podinputs

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
)

// BenchmarkHeadPodInputs measures what the node spends on a Ray head pod's
// inputs: image, env (with service links), argv, the kube-api-access and a
// ConfigMap volume, and the mounts.
func BenchmarkHeadPodInputs(b *testing.B) {
	objs := newFakeObjects(clocktesting.NewFakeClock(testTime),
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ray", Name: "kube-root-ca.crt"}, Data: map[string]string{"ca.crt": "CA"}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ray", Name: "code"}, Data: map[string]string{"app.py": "print(1)"}},
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ray", Name: "raycluster-head-svc"},
			Spec: corev1.ServiceSpec{ClusterIP: "10.96.5.5", Ports: []corev1.ServicePort{{Name: "gcs", Port: 6379}, {Name: "dashboard", Port: 8265}}}},
	)
	table := DefaultImages(pinnedOnly("/venv"), "/usr/bin/redis-server")
	pod := testPod(corev1.Container{Name: "ray-head", Image: "rayproject/ray:2.46.0",
		Command: []string{"/bin/bash", "-c", "--"}, Args: []string{"ray start --head --port=6379 --block"},
		Env: []corev1.EnvVar{{Name: "RAY_ADDRESS", Value: "$(RAYCLUSTER_HEAD_SVC_SERVICE_HOST):6379"}},
		VolumeMounts: []corev1.VolumeMount{{Name: "kube-api-access-1", MountPath: "/var/run/secrets/kubernetes.io/serviceaccount"},
			{Name: "code", MountPath: "/home/ray/app"}}})
	pod.Spec.EnableServiceLinks = nil
	pod.Spec.Volumes = []corev1.Volume{kubeAPIAccess("kube-api-access-1"),
		volume("code", corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "code"}}})}
	c := &pod.Spec.Containers[0]
	for b.Loop() {
		img, err := table.Resolve(c.Image)
		if err != nil {
			b.Fatal(err)
		}
		env, err := Env(b.Context(), objs, pod, c, img, testFacts())
		if err != nil {
			b.Fatal(err)
		}
		if _, err := Argv(img, c, env); err != nil {
			b.Fatal(err)
		}
		v, err := Volumes(b.Context(), objs, pod, b.TempDir(), testFacts())
		if err != nil {
			b.Fatal(err)
		}
		if _, err := Mounts(c, v); err != nil {
			b.Fatal(err)
		}
	}
}
