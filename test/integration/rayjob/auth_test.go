package rayjob_test

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// TestUserNamedAuthSecretWithOperatorCache: with the manager caching only
// the Secrets the operator labels (operator.CacheOptions), a RayJob whose
// token-auth cluster names its own Secret (authOptions.secretName, no
// operator label) still calls the dashboard with that Secret's token: the
// controller reads Secrets uncached.
func TestUserNamedAuthSecretWithOperatorCache(t *testing.T) {
	w := newWorldWithOperatorCache(t)

	w.Create(&corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "my-token"},
		Data:       map[string][]byte{"auth_token": []byte("s3cret")},
	})
	w.Create(rayJob("auth", rayv1.HTTPMode, func(j *rayv1.RayJob) {
		j.Spec.RayClusterSpec.RayVersion = "2.52.0"
		j.Spec.RayClusterSpec.AuthOptions = &rayv1.AuthOptions{Mode: rayv1.AuthModeToken, SecretName: new("my-token")}
	}))
	w.makeClusterReady(w.RayJobCluster("auth").Name)
	w.Eventually("the operator to submit", func() (bool, error) { return len(w.dash.Submissions()) == 1, nil })
	_, tokens := w.dash.ProvidedFor()
	if !slices.Contains(tokens, "s3cret") || slices.Contains(tokens, "") {
		t.Errorf("dashboard clients were made with tokens %q, want only %q", tokens, "s3cret")
	}
}
