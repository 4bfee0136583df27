package installcheck

import (
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ray-operator/ray-operator/internal/testing/testenv"
)

// OtherWebhookConfiguration is the ValidatingWebhookConfiguration
// CheckWebhookConfigurationWrites creates for someone else.
const OtherWebhookConfiguration = "someone-elses-validating-webhooks"

// CheckWebhookConfigurationWrites checks, as id (impersonated, with what
// the installed RBAC grants it), that the operator may list and watch
// every ValidatingWebhookConfiguration (its certificate rotator's informer
// does), read and update its own, named own (installed already), and
// neither read nor update another one, which the check creates as admin:
// with that update the operator's token could point anyone's webhooks at
// itself or switch them off.
func CheckWebhookConfigurationWrites(t *testing.T, env *testenv.Env, id Identity, own string) {
	t.Helper()
	ctx := t.Context()
	group, resource := admissionregistrationv1.GroupName, "validatingwebhookconfigurations"
	for _, verb := range []string{"list", "watch"} {
		if !Allowed(t, env.Client, id, Access{Group: group, Resource: resource, Verb: verb}) {
			t.Errorf("%s may not %s %s", id.User(), verb, resource)
		}
	}
	CheckDenied(t, env.Client, id, []Access{
		{Group: group, Resource: resource, Verb: "update"},
		{Group: group, Resource: resource, Verb: "update", Name: OtherWebhookConfiguration},
		{Group: group, Resource: resource, Verb: "patch", Name: own},
		{Group: group, Resource: resource, Verb: "delete", Name: own},
		{Group: group, Resource: resource, Verb: "create"},
		{Group: "admissionregistration.k8s.io", Resource: "mutatingwebhookconfigurations", Verb: "update"},
	})

	other := &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: OtherWebhookConfiguration}}
	if err := env.Client.Create(ctx, other); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(other), other); err != nil {
		t.Fatal(err)
	}
	cfg := rest.CopyConfig(env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: id.User(), Groups: id.Groups()}
	as, err := client.New(cfg, client.Options{Scheme: env.Client.Scheme()})
	if err != nil {
		t.Fatal(err)
	}

	list := &admissionregistrationv1.ValidatingWebhookConfigurationList{}
	if err := as.List(ctx, list); err != nil {
		t.Errorf("%s listing the configurations: %v", id.User(), err)
	}
	mine := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	if err := as.Get(ctx, client.ObjectKey{Name: own}, mine); err != nil {
		t.Fatalf("%s reading its own configuration %s: %v", id.User(), own, err)
	}
	metav1.SetMetaDataAnnotation(&mine.ObjectMeta, "ray-operator.test/written-by", "operator")
	if err := as.Update(ctx, mine); err != nil {
		t.Errorf("%s updating its own configuration %s: %v", id.User(), own, err)
	}

	if err := as.Get(ctx, client.ObjectKeyFromObject(other), &admissionregistrationv1.ValidatingWebhookConfiguration{}); !apierrors.IsForbidden(err) {
		t.Errorf("%s reading %s: %v, want forbidden", id.User(), OtherWebhookConfiguration, err)
	}
	metav1.SetMetaDataAnnotation(&other.ObjectMeta, "ray-operator.test/written-by", "operator")
	if err := as.Update(ctx, other); !apierrors.IsForbidden(err) {
		t.Errorf("%s updating %s: %v, want forbidden", id.User(), OtherWebhookConfiguration, err)
	}
}
