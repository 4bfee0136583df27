package helm_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/ray-operator/ray-operator/internal/testing/helmchart"
	"github.com/ray-operator/ray-operator/internal/testing/installcheck"
)

// TestRefusedValues checks that values the operator cannot honour, and
// KubeRay chart keys this chart does not implement, fail the render with a
// message instead of being dropped.
func TestRefusedValues(t *testing.T) {
	tests := []struct {
		set  []string
		want string
	}{
		{[]string{"logging.baseDir=/logs"}, "logging.baseDir and logging.fileName must be set together"},
		{[]string{"logging.sizeLimit=1Gi"}, "logging.baseDir and logging.fileName must be set together"},
		{[]string{"batchScheduler.enabled=true", "batchScheduler.name=yunikorn"}, "exclude each other"},
		{[]string{"configuration.defaultPodLabels.team=a"}, "configuration.defaultPodLabels is only passed"},
		{[]string{"configuration.headSidecarContainers[0].name=x"}, "configuration.headSidecarContainers is only passed"},
		{[]string{"reconcileConcurrency=0"}, "reconcileConcurrency must be a whole number of at least 1"},
		{[]string{"reconcileConcurrency=1.5"}, "reconcileConcurrency must be a whole number of at least 1"},
		{[]string{"kubeClient.qps=fast"}, "kubeClient.qps must be a number"},
		{[]string{"kubeClient.burst=-1"}, "kubeClient.burst must not be negative"},
		{[]string{"featureGates[0].name=", "featureGates[0].enabled=true"}, "every featureGates entry needs a name"},
		{[]string{"createAggregateClusterRoles=true"}, "createAggregateClusterRoles is not supported"},
		{[]string{"nodeEventForwarder.enabled=true"}, "nodeEventForwarder is not supported"},
		{[]string{"configuration.allowedNodeLabels[0]=zone"}, "configuration.allowedNodeLabels is not supported"},
		{[]string{"webhooks.enabled=true"}, "set webhook.enabled=true"},
		{[]string{"metrics.enabled=false", "metrics.prometheusRule.enabled=true"}, "metrics.prometheusRule.enabled needs metrics.enabled"},
		{[]string{"metrics.enabled=false", "metrics.grafanaDashboard.enabled=true"}, "metrics.grafanaDashboard.enabled needs metrics.enabled"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.set, ","), func(t *testing.T) {
			_, err := template(t, release("default", append([]string{"crds.install=false"}, tt.set...)...))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("helm template with %v: error %v, want one containing %q", tt.set, err, tt.want)
			}
		})
	}
}

// TestService checks the metrics Service: service.type and service.port in
// front of the container's metrics port, selecting the operator Pods.
func TestService(t *testing.T) {
	objs := render(t, release("kuberay", "crds.install=false"))
	d := installcheck.Convert[appsv1.Deployment](t, installcheck.Find(t, objs, "Deployment", helmchart.ReleaseNamespace, helmchart.ReleaseName))
	svc := installcheck.Convert[corev1.Service](t, installcheck.Find(t, objs, "Service", helmchart.ReleaseNamespace, helmchart.ReleaseName))
	want := []corev1.ServicePort{{Name: "http", Port: 9090, TargetPort: intstr.FromString("http"), Protocol: corev1.ProtocolTCP}}
	if diff := cmp.Diff(want, svc.Spec.Ports); diff != "" {
		t.Errorf("Service ports (-want +got):\n%s", diff)
	}
	if svc.Spec.Type != corev1.ServiceTypeClusterIP {
		t.Errorf("Service type %q", svc.Spec.Type)
	}
	checkSelects(t, &metav1.LabelSelector{MatchLabels: svc.Spec.Selector}, d.Spec.Template.Labels, "the operator Pods")
}

// TestServiceMonitor checks that metrics.serviceMonitor renders a
// ServiceMonitor that scrapes the metrics Service, where and how the values
// say, and that none is rendered by default.
func TestServiceMonitor(t *testing.T) {
	objs := render(t, release("kuberay", "crds.install=false"))
	svc := installcheck.Find(t, objs, "Service", helmchart.ReleaseNamespace, helmchart.ReleaseName)
	sm := installcheck.Find(t, objs, "ServiceMonitor", "monitoring", helmchart.ReleaseName)
	if sm.GetAPIVersion() != "monitoring.coreos.com/v1" {
		t.Errorf("ServiceMonitor apiVersion %q", sm.GetAPIVersion())
	}
	if sm.GetLabels()["release"] != "prometheus" {
		t.Errorf("ServiceMonitor labels %v lack additionalLabels release=prometheus", sm.GetLabels())
	}
	spec, _, _ := unstructured.NestedMap(sm.Object, "spec")
	want := map[string]any{
		"namespaceSelector": map[string]any{"matchNames": []any{helmchart.ReleaseNamespace}},
		"selector":          spec["selector"],
		"endpoints":         []any{map[string]any{"port": "http", "path": "/metrics", "interval": "15s", "honorLabels": false}},
	}
	if diff := cmp.Diff(want, spec); diff != "" {
		t.Errorf("ServiceMonitor spec (-want +got):\n%s", diff)
	}
	selector := &metav1.LabelSelector{}
	matchLabels, _, _ := unstructured.NestedStringMap(spec, "selector", "matchLabels")
	selector.MatchLabels = matchLabels
	checkSelects(t, selector, svc.GetLabels(), "the metrics Service")

	if len(objectsOfKind(render(t, release("default", "crds.install=false")), "ServiceMonitor")) != 0 {
		t.Error("a ServiceMonitor is rendered by default")
	}
}

// TestWebhookObjects checks the objects webhook.enabled adds: the webhook
// Service in front of the container's webhook port, the
// ValidatingWebhookConfiguration the operator fills the CA of, and the
// permissions to do so; and that none of them is rendered by default.
func TestWebhookObjects(t *testing.T) {
	objs := render(t, release("webhook", "crds.install=false"))
	d := installcheck.Convert[appsv1.Deployment](t, installcheck.Find(t, objs, "Deployment", helmchart.ReleaseNamespace, helmchart.ReleaseName))
	svc := installcheck.Convert[corev1.Service](t, installcheck.Find(t, objs, "Service", helmchart.ReleaseNamespace, helmchart.ReleaseName+"-webhook-service"))
	if diff := cmp.Diff([]corev1.ServicePort{{Name: "https", Port: 443, TargetPort: intstr.FromString("webhook-server"), Protocol: corev1.ProtocolTCP}}, svc.Spec.Ports); diff != "" {
		t.Errorf("webhook Service ports (-want +got):\n%s", diff)
	}
	checkSelects(t, &metav1.LabelSelector{MatchLabels: svc.Spec.Selector}, d.Spec.Template.Labels, "the operator Pods")

	vwc := installcheck.Convert[admissionregistrationv1.ValidatingWebhookConfiguration](t,
		installcheck.Find(t, objs, "ValidatingWebhookConfiguration", "", helmchart.ReleaseName+"-validating-webhook-configuration"))
	var want []admissionregistrationv1.ValidatingWebhook
	for _, kind := range []string{"raycluster", "rayjob", "rayservice", "raycronjob"} {
		want = append(want, validatingWebhook(kind))
	}
	if diff := cmp.Diff(want, vwc.Webhooks); diff != "" {
		t.Errorf("webhooks (-want +got):\n%s", diff)
	}

	role := installcheck.Convert[rbacv1.Role](t, installcheck.Find(t, objs, "Role", helmchart.ReleaseNamespace, helmchart.ReleaseName+"-webhook"))
	wantRole := []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"create", "get", "list", "update", "watch"}}}
	if diff := cmp.Diff(wantRole, role.Rules); diff != "" {
		t.Errorf("webhook Role rules (-want +got):\n%s", diff)
	}
	clusterRole := installcheck.Convert[rbacv1.ClusterRole](t, installcheck.Find(t, objs, "ClusterRole", "", helmchart.ReleaseName+"-webhook"))
	// Updates only of its own configuration, the one --webhook-configuration-name names.
	wantClusterRole := []rbacv1.PolicyRule{
		{APIGroups: []string{"admissionregistration.k8s.io"}, Resources: []string{"validatingwebhookconfigurations"}, Verbs: []string{"list", "watch"}},
		{
			APIGroups: []string{"admissionregistration.k8s.io"}, Resources: []string{"validatingwebhookconfigurations"},
			ResourceNames: []string{vwc.Name}, Verbs: []string{"get", "update"},
		},
	}
	if diff := cmp.Diff(wantClusterRole, clusterRole.Rules); diff != "" {
		t.Errorf("webhook ClusterRole rules (-want +got):\n%s", diff)
	}
	checkBinding(t, objs, installcheck.Find(t, objs, "Role", helmchart.ReleaseNamespace, helmchart.ReleaseName+"-webhook"))
	checkBinding(t, objs, installcheck.Find(t, objs, "ClusterRole", "", helmchart.ReleaseName+"-webhook"))

	for _, o := range render(t, release("default", "crds.install=false")) {
		if strings.Contains(o.GetName(), "webhook") {
			t.Errorf("rendered by default: %s %s", o.GetKind(), o.GetName())
		}
	}
}

// TestWebhookClusterRoleWritesOnlyItsConfiguration: whatever the chart's
// names, the webhook ClusterRole lets the operator update (and get) only
// the ValidatingWebhookConfiguration the chart installs and names in
// --webhook-configuration-name, and no verb there is left unlimited but the
// informer's list and watch.
func TestWebhookClusterRoleWritesOnlyItsConfiguration(t *testing.T) {
	for _, fullname := range []string{"", "tenant-ray"} {
		t.Run("fullnameOverride="+fullname, func(t *testing.T) {
			objs := render(t, release("webhook", "crds.install=false", "fullnameOverride="+fullname))
			name := fullname
			if name == "" {
				name = helmchart.ReleaseName
			}
			d := installcheck.Convert[appsv1.Deployment](t, installcheck.Find(t, objs, "Deployment", helmchart.ReleaseNamespace, name))
			var flag string
			for _, arg := range d.Spec.Template.Spec.Containers[0].Args {
				if v, ok := strings.CutPrefix(arg, "--webhook-configuration-name="); ok {
					flag = v
				}
			}
			installcheck.Find(t, objs, "ValidatingWebhookConfiguration", "", flag)
			role := installcheck.Convert[rbacv1.ClusterRole](t, installcheck.Find(t, objs, "ClusterRole", "", name+"-webhook"))
			for _, rule := range role.Rules {
				if len(rule.ResourceNames) == 0 {
					if diff := cmp.Diff([]string{"list", "watch"}, rule.Verbs); diff != "" {
						t.Errorf("verbs on every configuration (-want +got):\n%s", diff)
					}
					continue
				}
				if diff := cmp.Diff([]string{flag}, rule.ResourceNames); diff != "" {
					t.Errorf("resourceNames (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// validatingWebhook is the webhook the chart declares for kind.
func validatingWebhook(kind string) admissionregistrationv1.ValidatingWebhook {
	fail := admissionregistrationv1.Fail
	none := admissionregistrationv1.SideEffectClassNone
	return admissionregistrationv1.ValidatingWebhook{
		Name: "v" + kind + ".kb.io",
		ClientConfig: admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{
			Namespace: helmchart.ReleaseNamespace,
			Name:      helmchart.ReleaseName + "-webhook-service",
			Path:      new("/validate-ray-io-v1-" + kind),
			Port:      new(int32(443)),
		}},
		Rules: []admissionregistrationv1.RuleWithOperations{{
			Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
			Rule: admissionregistrationv1.Rule{
				APIGroups:   []string{"ray.io"},
				APIVersions: []string{"v1"},
				Resources:   []string{kind + "s"},
			},
		}},
		FailurePolicy:           &fail,
		SideEffects:             &none,
		AdmissionReviewVersions: []string{"v1"},
	}
}
