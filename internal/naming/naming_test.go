package naming

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

func cluster(name, ns string, mutate ...func(*rayv1.RayCluster)) *rayv1.RayCluster {
	c := &rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
	for _, m := range mutate {
		m(c)
	}
	return c
}

func TestChildNames(t *testing.T) {
	long := strings.Repeat("a", 53)
	tests := map[string]struct {
		got, want string
	}{
		"head generateName":          {HeadPodGenerateName("raycluster"), "raycluster-head-"},
		"head deterministic name":    {HeadPodName("raycluster"), "raycluster-head"},
		"head name prefix cut at 50": {HeadPodGenerateName(long), strings.Repeat("a", 50) + "-head-"},
		"head name lower-cased":      {HeadPodName("RayCluster"), "raycluster-head"},
		"worker generateName":        {WorkerPodGenerateName("raycluster", "small-group"), "raycluster-small-group-worker-"},
		"worker prefix cut at 50":    {WorkerPodGenerateName(long, "g"), strings.Repeat("a", 50) + "-worker-"},
		"replica name":               {WorkerReplicaName("tpu-group", "xh3hf"), "tpu-group-xh3hf"},
		"replica name of a 63-character group clipped to a label value": {WorkerReplicaName("g"+strings.Repeat("r", 62), "xh3hf"),
			strings.Repeat("r", 57) + "-xh3hf"},
		"worker prefix cut after a dot drops it": {WorkerPodGenerateName(strings.Repeat("a", 40), "dddddddd.x"),
			strings.Repeat("a", 40) + "-dddddddd-worker-"},
		"headless service":            {HeadlessServiceName("raycluster"), "raycluster-headless"},
		"serve service":               {ServeServiceName("raycluster"), "raycluster-serve-svc"},
		"serve service label":         {ServeServiceLabel("raycluster"), "raycluster-serve"},
		"ingress":                     {IngressName("raycluster"), "raycluster-head-ingress"},
		"route":                       {RouteName("raycluster"), "raycluster-head-route"},
		"redis cleanup job":           {RedisCleanupJobName("raycluster"), "raycluster-redis-cleanup"},
		"redis cleanup job clipped":   {RedisCleanupJobName(long), strings.Repeat("a", 49) + "-redis-cleanup"},
		"role":                        {AutoscalerRoleName("raycluster"), "raycluster"},
		"owner head service":          {OwnerHeadServiceName("myjob"), "myjob-head-svc"},
		"identifier":                  {Identifier("raycluster", rayv1.HeadNode), "raycluster-head"},
		"host from fqdn":              {HostFromFQDN("raycluster-head-svc.default.svc.cluster.local"), "raycluster-head-svc"},
		"clip name leading digit":     {ClipName("1abc"), "rabc"},
		"clip name keeps tail":        {ClipName(strings.Repeat("b", 10) + strings.Repeat("c", 50)), strings.Repeat("c", 50)},
		"clip label leading dash":     {ClipLabelValue("-abc"), "rabc"},
		"clip label allows digit":     {ClipLabelValue("1abc"), "1abc"},
		"clip label keeps last 63":    {ClipLabelValue(strings.Repeat("x", 70)), strings.Repeat("x", 63)},
		"clip name of empty is empty": {ClipName(""), ""},
		// KubeRay clips every generated Service, Ingress, Route and Role name
		// to its last 50 characters (first 51-len(namespace) for Routes).
		"head service of a 53-char cluster keeps the last 50": {OwnerHeadServiceName(long), strings.Repeat("a", 41) + "-head-svc"},
		"headless service clipped":                            {HeadlessServiceName(long), strings.Repeat("a", 41) + "-headless"},
		"serve service clipped":                               {ServeServiceName(long), strings.Repeat("a", 40) + "-serve-svc"},
		"ingress clipped":                                     {IngressName(long), strings.Repeat("a", 37) + "-head-ingress"},
		"role clipped":                                        {AutoscalerRoleName("1" + long), strings.Repeat("a", 50)},
		"route fits its namespace":                            {RouteNameIn("raycluster", "default"), "raycluster-head-route"},
		"route keeps the first 51-len(ns) characters":         {RouteNameIn(long, "team-a"), strings.Repeat("a", 45)},
		"route of a long name in a short namespace":           {RouteNameIn("r"+strings.Repeat("a", 30), "ns"), "r" + strings.Repeat("a", 30) + "-head-route"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestClusterDerivedNames(t *testing.T) {
	withHeadService := func(c *rayv1.RayCluster) {
		c.Spec.HeadGroupSpec.HeadService = &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "custom-svc"}}
	}
	withSA := func(c *rayv1.RayCluster) { c.Spec.HeadGroupSpec.Template.Spec.ServiceAccountName = "my-sa" }
	withSecret := func(c *rayv1.RayCluster) {
		c.Spec.AuthOptions = &rayv1.AuthOptions{Mode: rayv1.AuthModeToken, SecretName: ptr.To("my-token")}
	}
	tests := map[string]struct {
		cluster *rayv1.RayCluster
		fn      func(*rayv1.RayCluster) string
		want    string
	}{
		"default head service": {cluster("raycluster", "ns"), HeadServiceName, "raycluster-head-svc"},
		"long cluster name: clipped head service and fqdn": {cluster(strings.Repeat("b", 45), "ns"), func(c *rayv1.RayCluster) string { return HeadServiceFQDN(c, "") },
			strings.Repeat("b", 41) + "-head-svc.ns.svc.cluster.local"},
		"custom head service": {cluster("raycluster", "ns", withHeadService), HeadServiceName, "custom-svc"},
		"fqdn default domain": {cluster("raycluster", "ns"), func(c *rayv1.RayCluster) string { return HeadServiceFQDN(c, "") },
			"raycluster-head-svc.ns.svc.cluster.local"},
		"fqdn custom domain and service": {cluster("raycluster", "ns", withHeadService), func(c *rayv1.RayCluster) string { return HeadServiceFQDN(c, "example.org") },
			"custom-svc.ns.svc.example.org"},
		"service account defaults to cluster": {cluster("raycluster", "ns"), AutoscalerServiceAccountName, "raycluster"},
		"service account from template":       {cluster("raycluster", "ns", withSA), AutoscalerServiceAccountName, "my-sa"},
		"auth secret defaults to cluster":     {cluster("raycluster", "ns"), AuthSecretName, "raycluster"},
		"auth secret from authOptions":        {cluster("raycluster", "ns", withSecret), AuthSecretName, "my-token"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.fn(tc.cluster)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
