package rayjob

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// TestDashboardAuthToken: a token-protected cluster's dashboard is called
// with the token of its auth Secret.
func TestDashboardAuthToken(t *testing.T) {
	cluster := makeCluster(rayv1.Ready)
	cluster.Spec.AuthOptions = &rayv1.AuthOptions{Mode: rayv1.AuthModeToken}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: testCluster, Namespace: testNS},
		Data: map[string][]byte{"auth_token": []byte("s3cret")}}
	job := makeJob(mode(rayv1.HTTPMode), inState(rayv1.JobDeploymentStatusRunning), func(j *rayv1.RayJob) {
		j.Spec.RayClusterSpec.AuthOptions = &rayv1.AuthOptions{Mode: rayv1.AuthModeToken}
		j.Spec.RayClusterSpec.RayVersion = "2.52.0" // token auth needs it
	})
	e := newEnv(t, []client.Object{job, cluster, headService(), secret})
	if _, err := e.reconcile(t); err != nil {
		t.Fatal(err)
	}
	urls, tokens := e.dash.ProvidedFor()
	if diff := cmp.Diff([]string{testURL, testURL}, urls); diff != "" {
		t.Errorf("urls (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"s3cret", "s3cret"}, tokens); diff != "" {
		t.Errorf("tokens (-want +got):\n%s", diff)
	}
	if got := e.job(t).Status.JobDeploymentStatus; got != rayv1.JobDeploymentStatusRunning {
		t.Errorf("status %q", got)
	}
	if n := len(e.dash.Submissions()); n != 1 {
		t.Errorf("%d submissions", n)
	}
}
