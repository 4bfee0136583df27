package operator

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	configv1alpha1 "github.com/ray-operator/ray-operator/api/config/v1alpha1"
	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/buildinfo"
	"github.com/ray-operator/ray-operator/internal/features"
	"github.com/ray-operator/ray-operator/internal/raynetpol"
	"github.com/ray-operator/ray-operator/internal/rayrbac"
)

func TestNewScheme(t *testing.T) {
	tests := map[string]struct {
		gates       string
		wantGateway bool
	}{
		"default gates include Gateway API": {wantGateway: true},
		"incremental upgrade off":           {gates: "RayServiceIncrementalUpgrade=false"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			gate, err := features.Build(nil, tc.gates)
			if err != nil {
				t.Fatal(err)
			}
			scheme, err := NewScheme(gate, nil)
			if err != nil {
				t.Fatalf("NewScheme() error = %v", err)
			}
			for _, gvk := range []schema.GroupVersionKind{
				{Version: "v1", Kind: "Pod"},
				{Group: "batch", Version: "v1", Kind: "Job"},
				{Group: "ray.io", Version: "v1", Kind: "RayCluster"},
				{Group: "ray.io", Version: "v1", Kind: "RayCronJob"},
				{Group: "route.openshift.io", Version: "v1", Kind: "Route"},
			} {
				if !scheme.Recognizes(gvk) {
					t.Errorf("scheme does not know %v", gvk)
				}
			}
			gw := schema.GroupVersionKind{Group: "gateway.networking.k8s.io", Version: "v1", Kind: "HTTPRoute"}
			if got := scheme.Recognizes(gw); got != tc.wantGateway {
				t.Errorf("scheme knows HTTPRoute = %v, want %v", got, tc.wantGateway)
			}
		})
	}
}

func TestCacheOptions(t *testing.T) {
	if got := CacheOptions("").DefaultNamespaces; got != nil {
		t.Errorf("empty watch namespace should watch all namespaces, got %v", got)
	}
	got := CacheOptions("a,b").DefaultNamespaces
	if _, ok := got["a"]; !ok || len(got) != 2 {
		t.Errorf("watch namespaces a,b gave %v", got)
	}
	byObject := CacheOptions("").ByObject
	if n := len(byObject); n != 5 {
		t.Errorf("want Pod, Job, NetworkPolicy, Secret and EndpointSlice informers scoped by label, got %d entries", n)
	}
	for obj, scope := range byObject {
		if _, ok := obj.(*networkingv1.NetworkPolicy); ok {
			built := raynetpol.Build(&rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Name: "rc", Namespace: "ns"},
				Spec: rayv1.RayClusterSpec{NetworkPolicy: &rayv1.NetworkPolicyConfig{}}})
			if scope.Label == nil || !scope.Label.Matches(labels.Set(built[0].Labels)) || scope.Label.Matches(labels.Set{rayv1.LabelCluster: "rc"}) {
				t.Errorf("NetworkPolicy informer selector %v, want only the operator's", scope.Label)
			}
		}
		if _, ok := obj.(*discoveryv1.EndpointSlice); ok {
			serveSlice := labels.Set{rayv1.LabelServe: "svc-serve", discoveryv1.LabelServiceName: "svc-serve-svc"}
			if scope.Label == nil || !scope.Label.Matches(serveSlice) || scope.Label.Matches(labels.Set{discoveryv1.LabelServiceName: "other"}) {
				t.Errorf("EndpointSlice informer selector %v, want only the slices of serve Services", scope.Label)
			}
		}
		if _, ok := obj.(*corev1.Secret); !ok {
			continue
		}
		generated, err := rayrbac.BuildAuthSecret(&rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Name: "rc", Namespace: "ns"}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		authSecret := labels.Set(generated.Labels)
		other := labels.Set{rayv1.LabelCreatedBy: rayv1.CreatedByOperator}
		if scope.Label == nil || !scope.Label.Matches(authSecret) || scope.Label.Matches(other) || scope.Label.Matches(labels.Set{}) {
			t.Errorf("Secret informer selector %v, want only Secrets labelled %s", scope.Label, rayv1.LabelCluster)
		}
	}
}

func TestRegisterBuildInfo(t *testing.T) {
	reg := prometheus.NewRegistry()
	for range 2 { // a second manager in the same process finds it registered
		if err := registerBuildInfo(reg); err != nil {
			t.Fatal(err)
		}
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	if len(families) != 1 || families[0].GetName() != "ray_operator_build_info" {
		t.Fatalf("gathered %v, want ray_operator_build_info only", families)
	}
	labels := map[string]string{}
	for _, l := range families[0].GetMetric()[0].GetLabel() {
		labels[l.GetName()] = l.GetValue()
	}
	if labels["version"] != buildinfo.Version() || families[0].GetMetric()[0].GetGauge().GetValue() != 1 {
		t.Errorf("build info = %v, want version %q and value 1", families[0], buildinfo.Version())
	}
}

// TestBatchSchedulerScheme: the scheme knows the PodGroups of the chosen
// plugin only, and the deprecated switch means Volcano.
func TestBatchSchedulerScheme(t *testing.T) {
	volcanoPG := schema.GroupVersionKind{Group: "scheduling.volcano.sh", Version: "v1beta1", Kind: "PodGroup"}
	pluginsPG := schema.GroupVersionKind{Group: "scheduling.x-k8s.io", Version: "v1alpha1", Kind: "PodGroup"}
	wasPG := schema.GroupVersionKind{Group: "scheduling.k8s.io", Version: "v1alpha2", Kind: "PodGroup"}
	for name, c := range map[string]struct {
		cfg                  configv1alpha1.Configuration
		kubernetesWAS        bool
		volcano, plugin, was bool
	}{
		"KubernetesWAS gate":       {kubernetesWAS: true, was: true},
		"none":                     {},
		"volcano":                  {cfg: configv1alpha1.Configuration{BatchScheduler: "volcano"}, volcano: true},
		"enableBatchScheduler":     {cfg: configv1alpha1.Configuration{EnableBatchScheduler: true}, volcano: true},
		"scheduler-plugins":        {cfg: configv1alpha1.Configuration{BatchScheduler: "scheduler-plugins"}, plugin: true},
		"yunikorn has no API type": {cfg: configv1alpha1.Configuration{BatchScheduler: "yunikorn"}},
	} {
		t.Run(name, func(t *testing.T) {
			factory, err := batchSchedulerFactory(c.cfg, c.kubernetesWAS)
			if err != nil {
				t.Fatal(err)
			}
			if (factory == nil) != (c.cfg.BatchScheduler == "" && !c.cfg.EnableBatchScheduler && !c.kubernetesWAS) {
				t.Errorf("factory %T for %+v", factory, c.cfg)
			}
			scheme, err := NewScheme(features.NewGate(), factory)
			if err != nil {
				t.Fatal(err)
			}
			if scheme.Recognizes(volcanoPG) != c.volcano || scheme.Recognizes(pluginsPG) != c.plugin || scheme.Recognizes(wasPG) != c.was {
				t.Errorf("volcano PodGroup known %v, scheduler-plugins PodGroup known %v, scheduling.k8s.io PodGroup known %v",
					scheme.Recognizes(volcanoPG), scheme.Recognizes(pluginsPG), scheme.Recognizes(wasPG))
			}
		})
	}
	if _, err := batchSchedulerFactory(configv1alpha1.Configuration{BatchScheduler: "slurm"}, false); err == nil {
		t.Error("no error for an unknown scheduler")
	}
}

// TestCacheDropsManagedFields: cached objects carry no managedFields, the
// largest part of a Pod that no controller reads.
func TestCacheDropsManagedFields(t *testing.T) {
	transform := CacheOptions("").DefaultTransform
	if transform == nil {
		t.Fatal("no default transform")
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Labels: map[string]string{"a": "b"},
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kube-scheduler", Operation: metav1.ManagedFieldsOperationUpdate}}}}
	out, err := transform(pod)
	if err != nil {
		t.Fatal(err)
	}
	got := out.(*corev1.Pod)
	if got.ManagedFields != nil || got.Name != "p" || got.Labels["a"] != "b" {
		t.Errorf("transformed Pod %+v, want its metadata without managedFields", got.ObjectMeta)
	}
}

// TestClientConfigRateLimit: the default qps of 0 gives a client without a
// rate limiter (client-go builds none for a negative QPS); a set qps and
// burst are passed through.
func TestClientConfigRateLimit(t *testing.T) {
	base := &rest.Config{Host: "https://example", QPS: 5, Burst: 10}
	for _, tc := range []struct {
		qps       float64
		burst     int
		wantQPS   float32
		wantBurst int
	}{
		{0, 200, -1, 200},
		{20, 30, 20, 30},
	} {
		cfg := clientConfig(configv1alpha1.Configuration{QPS: new(tc.qps), Burst: new(tc.burst)}, base)
		if cfg.QPS != tc.wantQPS || cfg.Burst != tc.wantBurst {
			t.Errorf("qps %v burst %d gave %v/%d, want %v/%d", tc.qps, tc.burst, cfg.QPS, cfg.Burst, tc.wantQPS, tc.wantBurst)
		}
		client, err := rest.RESTClientFor(&rest.Config{Host: cfg.Host, QPS: cfg.QPS, Burst: cfg.Burst,
			ContentConfig: rest.ContentConfig{GroupVersion: &corev1.SchemeGroupVersion, NegotiatedSerializer: scheme.Codecs.WithoutConversion()}})
		if err != nil {
			t.Fatal(err)
		}
		if limited := client.GetRateLimiter() != nil; limited != (tc.qps > 0) {
			t.Errorf("qps %v: client has a rate limiter: %t", tc.qps, limited)
		}
	}
	if base.QPS != 5 {
		t.Error("clientConfig changed its input")
	}
}
