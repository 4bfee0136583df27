package monitoring_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/ray-operator/ray-operator/internal/testing/helmchart"
	"github.com/ray-operator/ray-operator/internal/testing/installcheck"
	"github.com/ray-operator/ray-operator/internal/testing/testenv"
	"github.com/ray-operator/ray-operator/test/monitoring"
)

const (
	kustomizeNamespace = "ray-system"
	kustomizeName      = "kuberay-operator"
	dashboardKey       = "ray-operator.json"
)

var wantAlerts = []string{"RayJobFailed", "RayServiceNotReady", "RayClusterProvisioningStuck", "RayOperatorReconcileErrors"}

// monitoringSet is what one install renders for monitoring.
type monitoringSet struct {
	objs           []*unstructured.Unstructured
	serviceMonitor *monitoringv1.ServiceMonitor
	rule           *monitoringv1.PrometheusRule
	dashboard      *corev1.ConfigMap
	service        *corev1.Service
	deployment     *appsv1.Deployment
}

// TestKustomizeMonitoring builds config/default-with-monitoring and checks
// its monitoring objects.
func TestKustomizeMonitoring(t *testing.T) {
	set := newSet(t, installcheck.Kustomize(t, "default-with-monitoring"), kustomizeNamespace, kustomizeName, kustomizeName+"-dashboard")
	checkSet(t, set)
	if args := set.deployment.Spec.Template.Spec.Containers[0].Args; !slices.Contains(args, "--enable-metrics") {
		t.Errorf("the Deployment's args %v lack --enable-metrics", args)
	}
	if set.rule.Spec.Groups[0].Rules[1].For == nil || *set.rule.Spec.Groups[0].Rules[1].For != "10m" {
		t.Errorf("RayServiceNotReady for = %v, want 10m", set.rule.Spec.Groups[0].Rules[1].For)
	}
}

// TestHelmMonitoring renders the chart with the monitoring values: at their
// defaults the PrometheusRule is the kustomize one; test/helm's values file
// (the golden render's) changes one duration and adds labels.
func TestHelmMonitoring(t *testing.T) {
	enable := []string{"metrics.serviceMonitor.enabled=true", "metrics.prometheusRule.enabled=true", "metrics.grafanaDashboard.enabled=true"}
	defaults := helmRender(t, helmchart.Release{Name: helmchart.ReleaseName, Namespace: helmchart.ReleaseNamespace, Set: enable})
	set := newSet(t, defaults, helmchart.ReleaseNamespace, helmchart.ReleaseName, helmchart.ReleaseName+"-dashboard")
	checkSet(t, set)
	kustomized := newSet(t, installcheck.Kustomize(t, "default-with-monitoring"), kustomizeNamespace, kustomizeName, kustomizeName+"-dashboard")
	if diff := cmp.Diff(kustomized.rule.Spec, set.rule.Spec); diff != "" {
		t.Errorf("the chart's default PrometheusRule differs from config/components/monitoring's (-kustomize +helm):\n%s", diff)
	}
	if got := set.dashboard.Labels["grafana_dashboard"]; got != "1" {
		t.Errorf("dashboard ConfigMap label grafana_dashboard = %q, want \"1\"", got)
	}

	valuesFile := filepath.Join(installcheck.ModuleRoot(t), "test", "helm", "testdata", "monitoring.values.yaml")
	custom := newSet(t, helmRender(t, helmchart.Release{Name: helmchart.ReleaseName, Namespace: helmchart.ReleaseNamespace,
		ValuesFiles: []string{valuesFile}}), helmchart.ReleaseNamespace, helmchart.ReleaseName, helmchart.ReleaseName+"-dashboard")
	checkSet(t, custom)
	if got := custom.rule.Spec.Groups[0].Rules[1].For; got == nil || *got != "5m" {
		t.Errorf("RayServiceNotReady for = %v, want the values file's 5m", got)
	}
	for _, labels := range []map[string]string{custom.rule.Labels, custom.serviceMonitor.Labels} {
		if labels["release"] != "prometheus" {
			t.Errorf("labels %v lack the values file's release: prometheus", labels)
		}
	}
	if got := custom.serviceMonitor.Spec.Endpoints[0].Interval; got != "15s" {
		t.Errorf("ServiceMonitor interval = %q, want 15s", got)
	}
}

// TestMonitoringObjectsMatchTheCRDs creates the monitoring objects of both
// installs, in dry-run mode, on an API server serving the Prometheus
// Operator's CRDs (testdata/crds, generated from its API module), whose
// OpenAPI schemas validate them; a ServiceMonitor with a malformed interval
// is rejected, so the schemas are in force.
func TestMonitoringObjectsMatchTheCRDs(t *testing.T) {
	env := testenv.Shared(t)
	ns := env.Namespace(t)
	enable := []string{"metrics.serviceMonitor.enabled=true", "metrics.prometheusRule.enabled=true", "metrics.grafanaDashboard.enabled=true"}
	valuesFile := filepath.Join(installcheck.ModuleRoot(t), "test", "helm", "testdata", "monitoring.values.yaml")
	installs := map[string][]*unstructured.Unstructured{
		"kustomize":        installcheck.Kustomize(t, "default-with-monitoring"),
		"helm defaults":    helmRender(t, helmchart.Release{Name: helmchart.ReleaseName, Namespace: helmchart.ReleaseNamespace, Set: enable}),
		"helm values file": helmRender(t, helmchart.Release{Name: helmchart.ReleaseName, Namespace: helmchart.ReleaseNamespace, ValuesFiles: []string{valuesFile}}),
	}
	for name, objs := range installs {
		created := 0
		for _, obj := range objs {
			if obj.GroupVersionKind().Group != monitoringv1.SchemeGroupVersion.Group && !strings.HasSuffix(obj.GetName(), "-dashboard") {
				continue
			}
			obj = obj.DeepCopy()
			obj.SetNamespace(ns)
			if err := env.Client.Create(t.Context(), obj, client.DryRunAll); err != nil {
				t.Errorf("%s: creating %s %s: %v", name, obj.GetKind(), obj.GetName(), err)
			}
			created++
		}
		if created != 3 {
			t.Errorf("%s: %d monitoring objects, want a ServiceMonitor, a PrometheusRule and a ConfigMap", name, created)
		}
	}

	bad := &unstructured.Unstructured{}
	bad.SetAPIVersion("monitoring.coreos.com/v1")
	bad.SetKind("ServiceMonitor")
	bad.SetNamespace(ns)
	bad.SetName("bad")
	bad.Object["spec"] = map[string]any{"selector": map[string]any{}, "endpoints": []any{map[string]any{"port": "http", "interval": "thirty seconds"}}}
	if err := env.Client.Create(t.Context(), bad, client.DryRunAll); err == nil || !strings.Contains(err.Error(), "interval") {
		t.Errorf("a ServiceMonitor with interval \"thirty seconds\": err = %v, want a schema error naming interval", err)
	}
}

// newSet picks the monitoring objects of an install.
func newSet(t *testing.T, objs []*unstructured.Unstructured, ns, name, dashboard string) monitoringSet {
	t.Helper()
	return monitoringSet{
		objs:           objs,
		serviceMonitor: installcheck.Convert[monitoringv1.ServiceMonitor](t, installcheck.Find(t, objs, "ServiceMonitor", ns, name)),
		rule:           installcheck.Convert[monitoringv1.PrometheusRule](t, installcheck.Find(t, objs, "PrometheusRule", ns, name)),
		dashboard:      installcheck.Convert[corev1.ConfigMap](t, installcheck.Find(t, objs, "ConfigMap", ns, dashboard)),
		service:        installcheck.Convert[corev1.Service](t, installcheck.Find(t, objs, "Service", ns, name)),
		deployment:     installcheck.Convert[appsv1.Deployment](t, installcheck.Find(t, objs, "Deployment", ns, name)),
	}
}

// checkSet checks what every install must give: the ServiceMonitor selects
// the metrics Service in its namespace, on the port the Deployment serves
// metrics on; the PrometheusRule loads with Prometheus' rule loader and
// holds the documented alerts; the dashboard is config/'s, byte for byte.
func checkSet(t *testing.T, s monitoringSet) {
	t.Helper()
	sm := s.serviceMonitor
	for k, v := range sm.Spec.Selector.MatchLabels {
		if s.service.Labels[k] != v {
			t.Errorf("ServiceMonitor selector %s=%s does not match the Service's labels %v", k, v, s.service.Labels)
		}
	}
	if len(sm.Spec.Selector.MatchLabels) == 0 {
		t.Error("the ServiceMonitor selects every Service")
	}
	if names := sm.Spec.NamespaceSelector.MatchNames; len(names) > 0 && !slices.Contains(names, s.service.Namespace) {
		t.Errorf("ServiceMonitor namespaces %v lack the Service's %s", names, s.service.Namespace)
	}
	if len(sm.Spec.Endpoints) != 1 || sm.Spec.Endpoints[0].Port != "http" ||
		!sm.Spec.Endpoints[0].HonorLabels {
		t.Errorf("ServiceMonitor endpoints %+v, want the port http with honorLabels", sm.Spec.Endpoints)
	}
	checkServicePort(t, s)

	queries, err := monitoring.LoadRules(ruleGroups(t, s.rule))
	if err != nil {
		t.Fatal(err)
	}
	var alerts []string
	for _, q := range queries {
		alerts = append(alerts, strings.TrimPrefix(q.Source, "rule ray-operator/"))
	}
	if !slices.Equal(alerts, wantAlerts) {
		t.Errorf("alerts = %v, want %v", alerts, wantAlerts)
	}

	want, err := os.ReadFile(dashboardPath(t))
	if err != nil {
		t.Fatal(err)
	}
	if got := s.dashboard.Data[dashboardKey]; strings.TrimSpace(got) != strings.TrimSpace(string(want)) {
		t.Errorf("the dashboard ConfigMap's %s is not config/components/monitoring/ray-operator-dashboard.json", dashboardKey)
	}
}

// checkServicePort: the Service's port http leads to the container port
// that --metrics-addr listens on.
func checkServicePort(t *testing.T, s monitoringSet) {
	t.Helper()
	for _, p := range s.service.Spec.Ports {
		if p.Name != "http" {
			continue
		}
		for _, cp := range s.deployment.Spec.Template.Spec.Containers[0].Ports {
			if cp.Name == p.TargetPort.String() && slices.Contains(s.deployment.Spec.Template.Spec.Containers[0].Args, fmt.Sprintf("--metrics-addr=:%d", cp.ContainerPort)) {
				return
			}
		}
	}
	t.Errorf("the Service's port http does not lead to the container port of --metrics-addr")
}

// ruleGroups is a PrometheusRule's spec as a rule file.
func ruleGroups(t *testing.T, rule *monitoringv1.PrometheusRule) []byte {
	t.Helper()
	data, err := yaml.Marshal(rule.Spec)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// kustomizePrometheusRule is config/default-with-monitoring's PrometheusRule.
func kustomizePrometheusRule(t *testing.T) *monitoringv1.PrometheusRule {
	t.Helper()
	objs := installcheck.Kustomize(t, "default-with-monitoring")
	return installcheck.Convert[monitoringv1.PrometheusRule](t, installcheck.Find(t, objs, "PrometheusRule", kustomizeNamespace, kustomizeName))
}

// helmRender renders the chart for r with the pinned helm.
func helmRender(t *testing.T, r helmchart.Release) []*unstructured.Unstructured {
	t.Helper()
	manifest, err := helmchart.Template(t, r)
	if err != nil {
		t.Fatal(err)
	}
	return helmchart.Parse(t, manifest)
}
