package rayjob

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// TestDashboardAuthToken: the dashboard of a token-protected cluster is
// called with the token of the Secret the cluster's Pods read it from; a
// missing Secret is an error and a warning event, and the dashboard is not
// called without the token.
func TestDashboardAuthToken(t *testing.T) {
	secret := func(name, token string) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: testNS},
			Data: map[string][]byte{"auth_token": []byte(token)}}
	}
	tests := map[string]struct {
		auth       *rayv1.AuthOptions
		secrets    []client.Object
		wantTokens []string
		wantErr    string
		wantEvent  string
	}{
		"mode token, generated Secret": {
			auth:       &rayv1.AuthOptions{Mode: rayv1.AuthModeToken},
			secrets:    []client.Object{secret(testCluster, "s3cret")},
			wantTokens: []string{"s3cret", "s3cret"},
		},
		"unset mode means token": {
			auth:       &rayv1.AuthOptions{},
			secrets:    []client.Object{secret(testCluster, "s3cret")},
			wantTokens: []string{"s3cret", "s3cret"},
		},
		"user Secret from authOptions.secretName": {
			auth:       &rayv1.AuthOptions{SecretName: new("mine")},
			secrets:    []client.Object{secret(testCluster, "generated"), secret("mine", "users")},
			wantTokens: []string{"users", "users"},
		},
		"disabled: no token": {
			auth:       &rayv1.AuthOptions{Mode: rayv1.AuthModeDisabled},
			wantTokens: []string{"", ""},
		},
		"missing Secret": {
			auth:      &rayv1.AuthOptions{Mode: rayv1.AuthModeToken},
			wantErr:   `RayCluster ns/job-cluster has token authentication, but its auth Secret ns/job-cluster is not found`,
			wantEvent: "Warning AuthSecretNotFound RayCluster ns/job-cluster has token authentication, but its auth Secret ns/job-cluster is not found",
		},
		"Secret without the key": {
			auth:      &rayv1.AuthOptions{Mode: rayv1.AuthModeToken},
			secrets:   []client.Object{&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: testCluster, Namespace: testNS}}},
			wantErr:   `has no "auth_token" key`,
			wantEvent: `Warning AuthSecretNotFound the auth Secret ns/job-cluster of RayCluster ns/job-cluster has no "auth_token" key`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			cluster := makeCluster(rayv1.Ready)
			cluster.Spec.AuthOptions = tc.auth
			job := makeJob(mode(rayv1.HTTPMode), inState(rayv1.JobDeploymentStatusRunning), func(j *rayv1.RayJob) {
				j.Spec.RayClusterSpec.AuthOptions = tc.auth
				j.Spec.RayClusterSpec.RayVersion = "2.52.0" // token auth needs it
			})
			e := newEnv(t, append([]client.Object{job, cluster, headService()}, tc.secrets...))
			_, err := e.reconcile(t)
			if tc.wantErr == "" && err != nil {
				t.Fatal(err)
			}
			if tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
			}
			_, tokens := e.dash.ProvidedFor()
			if diff := cmp.Diff(tc.wantTokens, tokens); diff != "" {
				t.Errorf("tokens the dashboard was created with (-want +got):\n%s", diff)
			}
			if tc.wantEvent != "" {
				events := drain(e)
				if !containsPrefix(events, tc.wantEvent) {
					t.Errorf("events %q, want one starting with %q", events, tc.wantEvent)
				}
				return
			}
			if got := e.job(t).Status.JobDeploymentStatus; got != rayv1.JobDeploymentStatusRunning {
				t.Errorf("status %q", got)
			}
			if n := len(e.dash.Submissions()); n != 1 {
				t.Errorf("%d submissions", n)
			}
		})
	}
}

// containsPrefix reports whether one of events starts with prefix.
func containsPrefix(events []string, prefix string) bool {
	for _, ev := range events {
		if strings.HasPrefix(ev, prefix) {
			return true
		}
	}
	return false
}
