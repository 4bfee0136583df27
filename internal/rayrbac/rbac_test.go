package rayrbac

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

func newCluster(mutators ...func(*rayv1.RayCluster)) *rayv1.RayCluster {
	c := &rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Name: "raycluster", Namespace: "default", UID: "uid-1"}}
	for _, m := range mutators {
		m(c)
	}
	return c
}

func wantMeta(name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name: name, Namespace: "default",
		Labels: map[string]string{"ray.io/cluster": "raycluster", "app.kubernetes.io/name": "kuberay", "app.kubernetes.io/created-by": "kuberay-operator"},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "ray.io/v1", Kind: "RayCluster", Name: "raycluster", UID: "uid-1",
			Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}},
	}
}

func TestBuildServiceAccount(t *testing.T) {
	tests := map[string]struct {
		cluster *rayv1.RayCluster
		want    string
	}{
		"cluster name":            {newCluster(), "raycluster"},
		"head template's SA name": {newCluster(func(c *rayv1.RayCluster) { c.Spec.HeadGroupSpec.Template.Spec.ServiceAccountName = "my-sa" }), "my-sa"},
		"long name clipped like the pod's": {newCluster(func(c *rayv1.RayCluster) {
			c.Spec.HeadGroupSpec.Template.Spec.ServiceAccountName = strings.Repeat("s", 60)
		}), strings.Repeat("s", 50)},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			want := &corev1.ServiceAccount{ObjectMeta: wantMeta(tc.want)}
			if diff := cmp.Diff(want, BuildServiceAccount(tc.cluster)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestBuildRoleAndBinding(t *testing.T) {
	c := newCluster()
	wantRole := &rbacv1.Role{
		ObjectMeta: wantMeta("raycluster"),
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list", "watch", "patch"}},
			{APIGroups: []string{""}, Resources: []string{"pods/resize"}, Verbs: []string{"patch"}},
			{APIGroups: []string{"ray.io"}, Resources: []string{"rayclusters"}, Verbs: []string{"get", "patch"}},
		},
	}
	if diff := cmp.Diff(wantRole, BuildRole(c)); diff != "" {
		t.Errorf("Role (-want +got):\n%s", diff)
	}
	wantBinding := &rbacv1.RoleBinding{
		ObjectMeta: wantMeta("raycluster"),
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: "raycluster", Namespace: "default"}},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "raycluster"},
	}
	if diff := cmp.Diff(wantBinding, BuildRoleBinding(c)); diff != "" {
		t.Errorf("RoleBinding (-want +got):\n%s", diff)
	}
}

func TestBuildAuthSecret(t *testing.T) {
	random := bytes.NewReader(bytes.Repeat([]byte{0xff}, 32))
	got, err := BuildAuthSecret(newCluster(), random)
	if err != nil {
		t.Fatal(err)
	}
	meta := wantMeta("raycluster")
	meta.Labels = map[string]string{"ray.io/cluster": "raycluster"}
	want := &corev1.Secret{
		ObjectMeta: meta,
		Type:       corev1.SecretTypeOpaque,
		Data:       map[string][]byte{"auth_token": []byte("//////////////////////////////////////////8=")},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}

	a, _ := BuildAuthSecret(newCluster(), nil)
	b, _ := BuildAuthSecret(newCluster(), nil)
	if bytes.Equal(a.Data["auth_token"], b.Data["auth_token"]) {
		t.Error("two generated tokens are equal")
	}

	boom := errors.New("boom")
	if _, err := BuildAuthSecret(newCluster(), iotest.ErrReader(boom)); !errors.Is(err, boom) {
		t.Errorf("err = %v, want %v", err, boom)
	}
}

func TestNeedsAuthSecret(t *testing.T) {
	tests := map[string]struct {
		auth *rayv1.AuthOptions
		want bool
	}{
		"no authOptions":    {nil, false},
		"disabled":          {&rayv1.AuthOptions{Mode: rayv1.AuthModeDisabled}, false},
		"token":             {&rayv1.AuthOptions{Mode: rayv1.AuthModeToken}, true},
		"mode unset":        {&rayv1.AuthOptions{}, true},
		"user secret":       {&rayv1.AuthOptions{Mode: rayv1.AuthModeToken, SecretName: ptr.To("mine")}, false},
		"kubernetes tokens": {&rayv1.AuthOptions{Mode: rayv1.AuthModeToken, EnableK8sTokenAuth: ptr.To(true)}, false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c := newCluster(func(c *rayv1.RayCluster) { c.Spec.AuthOptions = tc.auth })
			if got := NeedsAuthSecret(c); got != tc.want {
				t.Errorf("NeedsAuthSecret = %v, want %v", got, tc.want)
			}
		})
	}
}
