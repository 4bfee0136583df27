package dashboard_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/dashboard"
)

func accessCluster(ports ...corev1.ContainerPort) *rayv1.RayCluster {
	c := &rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Name: "rc", Namespace: "ns"}}
	c.Spec.HeadGroupSpec.Template.Spec.Containers = []corev1.Container{{Name: "ray-head", Ports: ports}}
	return c
}

func TestAccessURL(t *testing.T) {
	custom := accessCluster(corev1.ContainerPort{Name: "dashboard", ContainerPort: 9999})
	custom.Spec.HeadGroupSpec.HeadService = &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "my-head"}}
	tests := map[string]struct {
		cluster *rayv1.RayCluster
		domain  string
		want    string
	}{
		"defaults":                       {cluster: accessCluster(), want: "rc-head-svc.ns.svc.cluster.local:8265"},
		"cluster domain":                 {cluster: accessCluster(), domain: "corp.example", want: "rc-head-svc.ns.svc.corp.example:8265"},
		"declared port and head service": {cluster: custom, want: "my-head.ns.svc.cluster.local:9999"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := (dashboard.Access{ClusterDomain: tc.domain}).URL(tc.cluster); got != tc.want {
				t.Errorf("URL = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestAccessClient(t *testing.T) {
	withAuth := func(secretName string) *rayv1.RayCluster {
		c := accessCluster()
		c.Spec.AuthOptions = &rayv1.AuthOptions{SecretName: &secretName}
		return c
	}
	secret := func(name string, data map[string][]byte) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"}, Data: data}
	}
	tests := map[string]struct {
		cluster     *rayv1.RayCluster
		secrets     []*corev1.Secret
		url         string
		wantURL     string
		wantToken   string
		wantMissing bool
	}{
		"no auth":           {cluster: accessCluster(), wantURL: "rc-head-svc.ns.svc.cluster.local:8265"},
		"url given":         {cluster: accessCluster(), url: "http://x:1", wantURL: "http://x:1"},
		"user secret":       {cluster: withAuth("mine"), secrets: []*corev1.Secret{secret("mine", map[string][]byte{"auth_token": []byte("t0k")})}, wantURL: "rc-head-svc.ns.svc.cluster.local:8265", wantToken: "t0k"},
		"secret missing":    {cluster: withAuth("mine"), wantMissing: true},
		"token key missing": {cluster: withAuth("mine"), secrets: []*corev1.Secret{secret("mine", map[string][]byte{"other": []byte("x")})}, wantMissing: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			b := fake.NewClientBuilder()
			for _, s := range tc.secrets {
				b = b.WithObjects(s)
			}
			var gotURL, gotToken string
			access := dashboard.Access{Secrets: b.Build(), Clients: func(url, token string) (dashboard.Client, error) {
				gotURL, gotToken = url, token
				return nil, nil
			}}
			_, err := access.Client(context.Background(), tc.cluster, tc.url)
			if tc.wantMissing {
				if !errors.Is(err, dashboard.ErrAuthSecretMissing) {
					t.Fatalf("error = %v, want ErrAuthSecretMissing", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{tc.wantURL, tc.wantToken}, []string{gotURL, gotToken}); diff != "" {
				t.Errorf("url, token (-want +got):\n%s", diff)
			}
		})
	}
}
