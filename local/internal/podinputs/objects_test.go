package podinputs

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"
)

// TestClientObjects runs Env and Volumes through ClientObjects on a fake
// clientset: the objects, NotFound for missing ones, and the TokenRequest
// sent to the serviceaccounts/token subresource.
func TestClientObjects(t *testing.T) {
	cs := fake.NewClientset(
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ray", Name: "creds"}, Data: map[string][]byte{"password": []byte("pw")}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ray", Name: "kube-root-ca.crt"}, Data: map[string]string{"ca.crt": "CA"}},
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ray", Name: "head"},
			Spec: corev1.ServiceSpec{ClusterIP: "10.96.1.1", Ports: []corev1.ServicePort{{Port: 6379}}}},
	)
	cs.PrependReactor("create", "serviceaccounts", func(a k8stesting.Action) (bool, runtime.Object, error) {
		create := a.(k8stesting.CreateAction)
		if create.GetSubresource() != "token" {
			return false, nil, nil
		}
		tr := create.GetObject().(*authenticationv1.TokenRequest).DeepCopy()
		tr.Status.Token = "for " + create.GetNamespace() + "/" + tr.Spec.BoundObjectRef.Name
		tr.Status.ExpirationTimestamp = metav1.NewTime(testTime.Add(time.Hour))
		return true, tr, nil
	})
	objs := ClientObjects(cs)
	pod := testPod(corev1.Container{Name: "c", Env: []corev1.EnvVar{secretEnv("PW", "creds", "password", nil)}})
	pod.Spec.EnableServiceLinks = ptr.To(true)
	pod.Spec.Volumes = []corev1.Volume{kubeAPIAccess("kube-api-access-1")}

	env, err := Env(t.Context(), objs, pod, &pod.Spec.Containers[0], Image{}, PodFacts{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"HEAD_SERVICE_HOST=10.96.1.1", "HEAD_SERVICE_PORT=6379", "HEAD_PORT=tcp://10.96.1.1:6379",
		"HEAD_PORT_6379_TCP=tcp://10.96.1.1:6379", "HEAD_PORT_6379_TCP_PROTO=tcp", "HEAD_PORT_6379_TCP_PORT=6379",
		"HEAD_PORT_6379_TCP_ADDR=10.96.1.1", "PW=pw"}
	if diff := cmp.Diff(want, env); diff != "" {
		t.Errorf("Env (-want +got):\n%s", diff)
	}

	v, err := VolumesAt(t.Context(), nil, objs, pod, t.TempDir(), PodFacts{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, name := range []string{"token", "ca.crt", "namespace"} {
		data, err := os.ReadFile(filepath.Join(v.Paths["kube-api-access-1"], name))
		if err != nil {
			t.Fatal(err)
		}
		got[name] = string(data)
	}
	if diff := cmp.Diff(map[string]string{"token": "for ray/head-abc", "ca.crt": "CA", "namespace": "ray"}, got); diff != "" {
		t.Errorf("kube-api-access files (-want +got):\n%s", diff)
	}

	if _, err := objs.ConfigMap(t.Context(), "ray", "absent"); !apierrors.IsNotFound(err) {
		t.Errorf("ConfigMap(absent) error = %v, want NotFound", err)
	}
}
