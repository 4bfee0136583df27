// Package testenv_test checks the test harness itself against the real
// binaries: the shared envtest serves the CRDs and a client, pods can be
// marked Running and Ready, and no etcd or kube-apiserver outlives a test
// process that dies.
package testenv_test

import (
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/testing/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

func TestSharedEnvServesCRDsAndClient(t *testing.T) {
	env := testenv.Shared(t)
	if env != testenv.Shared(t) {
		t.Fatal("Shared started a second environment")
	}
	ns := env.Namespace(t)
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "cm", Namespace: ns},
		Data:       map[string]string{"k": "v"},
	}
	if err := env.Client.Create(t.Context(), cm); err != nil {
		t.Fatalf("create: %v", err)
	}
	var got corev1.ConfigMap
	if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(cm), &got); err != nil {
		t.Fatalf("get: %v", err)
	}
	if diff := cmp.Diff(cm.Data, got.Data); diff != "" {
		t.Errorf("data (-want +got):\n%s", diff)
	}
	if len(env.Kubeconfig) == 0 {
		t.Error("empty Kubeconfig")
	}
	for _, name := range []string{"rayclusters.ray.io", "rayjobs.ray.io", "rayservices.ray.io", "raycronjobs.ray.io"} {
		var crd apiextensionsv1.CustomResourceDefinition
		if err := env.Client.Get(t.Context(), client.ObjectKey{Name: name}, &crd); err != nil {
			t.Errorf("CRD %s: %v", name, err)
		}
	}
	var clusters rayv1.RayClusterList
	if err := env.Client.List(t.Context(), &clusters, client.InNamespace(ns)); err != nil {
		t.Errorf("listing RayClusters: %v", err)
	}
}

func TestMarkPodsRunningReady(t *testing.T) {
	env := testenv.Shared(t)
	ns := env.Namespace(t)
	pods := []*corev1.Pod{newPod(ns, "a"), newPod(ns, "b")}
	for _, p := range pods {
		if err := env.Client.Create(t.Context(), p); err != nil {
			t.Fatalf("create: %v", err)
		}
	}
	if err := testenv.MarkPodsRunningReady(t.Context(), env.Client, pods...); err != nil {
		t.Fatal(err)
	}
	for _, p := range pods {
		var got corev1.Pod
		if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(p), &got); err != nil {
			t.Fatalf("get: %v", err)
		}
		want := summary{Phase: corev1.PodRunning, Ready: corev1.ConditionTrue, HasIP: true, ContainersReady: 1}
		if diff := cmp.Diff(want, summarize(&got)); diff != "" {
			t.Errorf("pod %s (-want +got):\n%s", p.Name, diff)
		}
	}
	if pods[0].Status.PodIP == pods[1].Status.PodIP {
		t.Errorf("both pods got IP %s", pods[0].Status.PodIP)
	}
}

// summary is what MarkPodsRunningReady promises about a pod.
type summary struct {
	Phase           corev1.PodPhase
	Ready           corev1.ConditionStatus
	HasIP           bool
	ContainersReady int
}

func summarize(p *corev1.Pod) summary {
	s := summary{Phase: p.Status.Phase, HasIP: p.Status.PodIP != ""}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			s.Ready = c.Status
		}
	}
	for _, c := range p.Status.ContainerStatuses {
		if c.Ready && c.State.Running != nil {
			s.ContainersReady++
		}
	}
	return s
}

func newPod(ns, name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "busybox"}}},
	}
}
