package helm_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8slabels "k8s.io/apimachinery/pkg/labels"
	"k8s.io/component-base/featuregate"

	configv1alpha1 "github.com/ray-operator/ray-operator/api/config/v1alpha1"
	"github.com/ray-operator/ray-operator/internal/operator"
	"github.com/ray-operator/ray-operator/internal/testing/helmchart"
	"github.com/ray-operator/ray-operator/internal/testing/installcheck"
)

// TestDeploymentSettings resolves each case's Deployment with the
// operator's own flag parser (the --config file read from the rendered
// ConfigMap) and checks that every value reached the setting, knob, gate or
// Pod field it is documented to set.
func TestDeploymentSettings(t *testing.T) {
	tests := []struct {
		values string
		sets   []string
		check  func(t *testing.T, s operator.Settings, d *appsv1.Deployment)
	}{
		{values: "default", check: checkDefaults},
		{values: "single-namespace", check: func(t *testing.T, s operator.Settings, _ *appsv1.Deployment) {
			if got := s.Config.WatchNamespace; got != "team-a,team-b" {
				t.Errorf("watchNamespace = %q, want team-a,team-b", got)
			}
		}},
		{values: "webhook", check: checkWebhookContainer},
		{values: "kuberay", check: checkKubeRayValues},
		{values: "default", sets: []string{"creationEvents=per-pass"}, check: func(t *testing.T, s operator.Settings, _ *appsv1.Deployment) {
			if got := s.Config.CreationEvents; got != configv1alpha1.CreationEventsPerPass {
				t.Errorf("creationEvents = %q, want per-pass", got)
			}
		}},
		{values: "default", sets: []string{"mtls.certificates=operator", "mtls.certificateDuration=36h"}, check: checkMTLSValues},
		{values: "default", sets: []string{"configuration.enabled=true", "mtls.certificates=operator", "mtls.certificateDuration=36h"}, check: checkMTLSValues},
	}
	for _, tt := range tests {
		t.Run(tt.values+strings.Join(tt.sets, ","), func(t *testing.T) {
			objs := render(t, release(tt.values, append([]string{"crds.install=false"}, tt.sets...)...))
			d := installcheck.Convert[appsv1.Deployment](t, installcheck.Find(t, objs, "Deployment", helmchart.ReleaseNamespace, helmchart.ReleaseName))
			s := installcheck.CheckDeployment(t, d, installcheck.DeploymentCheck{Identity: helmchart.Operator(), Objects: objs})
			checkStrategy(t, s, d)
			checkSelects(t, d.Spec.Selector, d.Spec.Template.Labels, "the Deployment's Pods")
			tt.check(t, s, d)
		})
	}
}

// checkStrategy checks the update strategy with leader election: a rolling
// update that never has fewer Ready Pods than replicas (the webhooks stay
// served; one Pod leads at a time).
func checkStrategy(t *testing.T, s operator.Settings, d *appsv1.Deployment) {
	t.Helper()
	st := d.Spec.Strategy
	if !s.Config.LeaderElectionEnabled() {
		t.Fatal("leader election is off")
	}
	if st.Type != appsv1.RollingUpdateDeploymentStrategyType || st.RollingUpdate == nil || st.RollingUpdate.MaxUnavailable == nil || st.RollingUpdate.MaxUnavailable.IntValue() != 0 {
		t.Errorf("strategy = %+v with leader election, want RollingUpdate with maxUnavailable 0", st)
	}
}

// TestStrategyWithoutLeaderElection: without leader election two Pods
// would both reconcile, so the old one stops before the new one starts.
func TestStrategyWithoutLeaderElection(t *testing.T) {
	objs := render(t, release("default", "crds.install=false", "leaderElectionEnabled=false"))
	d := installcheck.Convert[appsv1.Deployment](t, installcheck.Find(t, objs, "Deployment", helmchart.ReleaseNamespace, helmchart.ReleaseName))
	if d.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType || d.Spec.Strategy.RollingUpdate != nil {
		t.Errorf("strategy = %+v without leader election, want Recreate", d.Spec.Strategy)
	}
}

func checkDefaults(t *testing.T, s operator.Settings, d *appsv1.Deployment) {
	t.Helper()
	cfg := s.Config
	if cfg.CreationEvents != configv1alpha1.CreationEventsPerGroup {
		t.Errorf("creationEvents = %q, want per-group", cfg.CreationEvents)
	}
	if cfg.WatchNamespace != "" || !cfg.EnableMetrics || cfg.Concurrency() != configv1alpha1.DefaultReconcileConcurrency() || *cfg.QPS != 0 || *cfg.Burst != 200 {
		t.Errorf("defaults: watchNamespace %q, enableMetrics %t, reconcileConcurrency %d, qps %v, burst %d; want \"\", true, %d, 0, 200",
			cfg.WatchNamespace, cfg.EnableMetrics, cfg.Concurrency(), *cfg.QPS, *cfg.Burst, configv1alpha1.DefaultReconcileConcurrency())
	}
	if s.Knobs.Webhooks {
		t.Error("webhooks are on by default")
	}
	c := d.Spec.Template.Spec.Containers[0]
	if c.Image != "ghcr.io/ray-operator/ray-operator:latest" || *d.Spec.Replicas != 1 {
		t.Errorf("image %q, replicas %d; want ghcr.io/ray-operator/ray-operator:latest, 1", c.Image, *d.Spec.Replicas)
	}
	if sc := c.SecurityContext; sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
		t.Error("the root filesystem is writable")
	}
}

func checkWebhookContainer(t *testing.T, s operator.Settings, d *appsv1.Deployment) {
	t.Helper()
	if !s.Knobs.Webhooks {
		t.Error("webhook.enabled does not set ENABLE_WEBHOOKS=true")
	}
	c := d.Spec.Template.Spec.Containers[0]
	wantEnv := []corev1.EnvVar{
		{Name: "ENABLE_WEBHOOKS", Value: "true"},
		{Name: "POD_NAMESPACE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}},
	}
	if diff := cmp.Diff(wantEnv, c.Env); diff != "" {
		t.Errorf("env (-want +got):\n%s", diff)
	}
	w := s.Webhooks
	if !w.Enabled || w.Namespace != helmchart.ReleaseNamespace || w.ServiceName != "kuberay-operator-webhook-service" ||
		w.ConfigurationName != "kuberay-operator-validating-webhook-configuration" || w.SecretName != "kuberay-operator-webhook-server-cert" {
		t.Errorf("webhook settings %+v do not name the chart's Service, configuration and Secret in %s", w, helmchart.ReleaseNamespace)
	}
	installcheck.CheckWebhookServing(t, d, w)
}

// checkKubeRayValues checks each value of testdata/kuberay.values.yaml.
func checkKubeRayValues(t *testing.T, s operator.Settings, d *appsv1.Deployment) {
	t.Helper()
	want := configv1alpha1.Configuration{
		MetricsAddr:             ":8080",
		ProbeAddr:               ":8082",
		EnableLeaderElection:    new(true),
		WatchNamespace:          "team-a,team-b",
		LogFile:                 "/var/log/kuberay/operator.log",
		LogFileEncoder:          "json",
		LogStdoutEncoder:        "console",
		BatchScheduler:          "volcano",
		ReconcileConcurrency:    4,
		CreationEvents:          configv1alpha1.CreationEventsPerGroup,
		MTLSCertificates:        configv1alpha1.MTLSCertificatesCertManager,
		MTLSCertificateDuration: &metav1.Duration{Duration: configv1alpha1.DefaultMTLSCertificateDuration},
		EnableMetrics:           true,
		QPS:                     new(50.5),
		Burst:                   new(120),
		DefaultContainerEnvs:    []corev1.EnvVar{{Name: "RAY_enable_open_telemetry", Value: "true"}},
		DefaultPodAnnotations:   map[string]string{"prometheus.io/scrape": "true"},
		DefaultPodLabels:        map[string]string{"example.com/cost-center": "ml"},
		HeadSidecarContainers:   []corev1.Container{{Name: "fluentbit", Image: "fluent/fluent-bit:3.2"}},
		WorkerSidecarContainers: []corev1.Container{{Name: "fluentbit", Image: "fluent/fluent-bit:3.2"}},
	}
	ignore := cmpopts.IgnoreFields(configv1alpha1.Configuration{}, "TypeMeta", "RayServiceStatusPollInterval")
	if diff := cmp.Diff(want, s.Config, ignore); diff != "" {
		t.Errorf("configuration (-want +got):\n%s", diff)
	}
	for gate, on := range map[string]bool{"RayCronJob": true, "AsyncJobInfoQuery": true, "RayClusterStatusConditions": true} {
		if got := s.Features.Enabled(featuregate.Feature(gate)); got != on {
			t.Errorf("feature gate %s = %t, want %t", gate, got, on)
		}
	}
	if s.Knobs.ClusterDomain != "example.local" || s.Knobs.ProbesInjection {
		t.Errorf("knobs: CLUSTER_DOMAIN %q, probes injection %t; want example.local, false", s.Knobs.ClusterDomain, s.Knobs.ProbesInjection)
	}
	checkKubeRayPod(t, d)
}

// checkKubeRayPod checks the Pod-level values of testdata/kuberay.values.yaml.
func checkKubeRayPod(t *testing.T, d *appsv1.Deployment) {
	t.Helper()
	spec := d.Spec.Template.Spec
	c := spec.Containers[0]
	if *d.Spec.Replicas != 2 || c.Image != "registry.example.com/ray-operator:v1.2.3" || c.ImagePullPolicy != corev1.PullAlways {
		t.Errorf("replicas %d, image %q, pull policy %q", *d.Spec.Replicas, c.Image, c.ImagePullPolicy)
	}
	if d.Labels["team"] != "ml-platform" || d.Spec.Template.Labels["team"] != "ml-platform" {
		t.Error("labels do not reach the Deployment and its Pods")
	}
	if d.Spec.Template.Annotations["example.com/owner"] != "ml-platform" {
		t.Error("annotations do not reach the Pods")
	}
	if _, ok := d.Spec.Template.Annotations["checksum/config"]; !ok {
		t.Error("the Pods do not roll when the configuration changes (no checksum/config)")
	}
	got := podFields{spec.ImagePullSecrets, spec.NodeSelector, spec.Tolerations, spec.PriorityClassName, spec.Affinity != nil, spec.SecurityContext.FSGroup}
	wantPod := podFields{
		[]corev1.LocalObjectReference{{Name: "regcred"}},
		map[string]string{"kubernetes.io/os": "linux"},
		[]corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "system", Effect: corev1.TaintEffectNoSchedule}},
		"system-cluster-critical", true, new(int64(65532)),
	}
	if diff := cmp.Diff(wantPod, got); diff != "" {
		t.Errorf("Pod fields (-want +got):\n%s", diff)
	}
	wantResources := corev1.ResourceRequirements{
		Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi")},
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("1Gi")},
	}
	if diff := cmp.Diff(wantResources, c.Resources); diff != "" {
		t.Errorf("resources (-want +got):\n%s", diff)
	}
	if p := c.LivenessProbe; p.InitialDelaySeconds != 20 || p.PeriodSeconds != 10 || p.FailureThreshold != 3 {
		t.Errorf("liveness probe timing %d/%d/%d, want 20/10/3", p.InitialDelaySeconds, p.PeriodSeconds, p.FailureThreshold)
	}
	if p := c.ReadinessProbe; p.InitialDelaySeconds != 5 || p.PeriodSeconds != 10 || p.FailureThreshold != 3 {
		t.Errorf("readiness probe timing %d/%d/%d, want 5/10/3", p.InitialDelaySeconds, p.PeriodSeconds, p.FailureThreshold)
	}
	checkLogVolume(t, spec, c)
}

// podFields are the scheduling and Pod values a KubeRay values file sets.
type podFields struct {
	PullSecrets  []corev1.LocalObjectReference
	NodeSelector map[string]string
	Tolerations  []corev1.Toleration
	Priority     string
	HasAffinity  bool
	FSGroup      *int64
}

// checkLogVolume checks that logging.baseDir is a writable emptyDir of
// logging.sizeLimit, so that --log-file-path works on a read-only root.
func checkLogVolume(t *testing.T, spec corev1.PodSpec, c corev1.Container) {
	t.Helper()
	var mount string
	for _, m := range c.VolumeMounts {
		if m.MountPath == "/var/log/kuberay" && !m.ReadOnly {
			mount = m.Name
		}
	}
	for _, v := range spec.Volumes {
		if v.Name == mount && v.EmptyDir != nil && v.EmptyDir.SizeLimit != nil && v.EmptyDir.SizeLimit.Cmp(resource.MustParse("1Gi")) == 0 {
			return
		}
	}
	t.Errorf("no writable 1Gi emptyDir at /var/log/kuberay: mounts %v, volumes %v", c.VolumeMounts, spec.Volumes)
}

// TestConfigFileMatchesFlags renders the KubeRay values once with
// configuration.enabled (one --config file) and once without (flags), and
// checks that the operator resolves both to the same configuration: the
// chart maps each value to a flag and to a file field of the same meaning.
func TestConfigFileMatchesFlags(t *testing.T) {
	resolve := func(set ...string) operator.Settings {
		objs := render(t, release("kuberay", append(set, "crds.install=false")...))
		d := installcheck.Convert[appsv1.Deployment](t, installcheck.Find(t, objs, "Deployment", helmchart.ReleaseNamespace, helmchart.ReleaseName))
		return installcheck.ResolveContainer(t, d.Spec.Template.Spec, installcheck.DeploymentCheck{Identity: helmchart.Operator(), Objects: objs})
	}
	file := resolve()
	flags := resolve("configuration.enabled=false",
		"configuration.defaultContainerEnvs=null", "configuration.defaultPodAnnotations=null", "configuration.defaultPodLabels=null",
		"configuration.headSidecarContainers=null", "configuration.workerSidecarContainers=null")
	fileOnly := cmpopts.IgnoreFields(configv1alpha1.Configuration{}, "TypeMeta",
		"DefaultContainerEnvs", "DefaultPodAnnotations", "DefaultPodLabels", "HeadSidecarContainers", "WorkerSidecarContainers")
	if diff := cmp.Diff(file.Config, flags.Config, fileOnly); diff != "" {
		t.Errorf("configuration from the file (-) and from flags (+) differ:\n%s", diff)
	}
	if len(file.Config.HeadSidecarContainers) == 0 {
		t.Error("the file carries no head sidecar; the comparison is vacuous")
	}
}

// checkSelects checks that selector selects objects labelled labels.
func checkSelects(t *testing.T, selector *metav1.LabelSelector, labels map[string]string, what string) {
	t.Helper()
	s, err := metav1.LabelSelectorAsSelector(selector)
	if err != nil {
		t.Fatal(err)
	}
	if s.Empty() || !s.Matches(k8slabels.Set(labels)) {
		t.Errorf("selector %v does not select %s, labelled %v", s, what, labels)
	}
}

// objectsOfKind returns the objects of objs of that kind.
func objectsOfKind(objs []*unstructured.Unstructured, kind string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == kind {
			out = append(out, o)
		}
	}
	return out
}

// checkMTLSValues: the mtls values reach the operator's settings, by flags
// or through the configuration file.
func checkMTLSValues(t *testing.T, s operator.Settings, _ *appsv1.Deployment) {
	t.Helper()
	if got := s.Config.MTLSCertificates; got != configv1alpha1.MTLSCertificatesOperator {
		t.Errorf("mtlsCertificates = %q, want operator", got)
	}
	if d := s.Config.MTLSCertificateDuration; d == nil || d.Duration != 36*time.Hour {
		t.Errorf("mtlsCertificateDuration = %v, want 36h", d)
	}
}
