package kubeproxy_test

import (
	"errors"
	"net"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/dashboard"
	"github.com/ray-operator/ray-operator/internal/testing/testenv"
)

// TestRedirectGetsNoToken: with --use-kubernetes-proxy the operator
// reaches a head through the API server with a ServiceAccount token, which
// client-go's transport adds to every request whatever its host. A head
// (here an HTTP server behind the head Service and the head Pod) that
// answers with a redirect to another listener gets the request refused,
// and the listener gets nothing: no token, no request.
func TestRedirectGetsNoToken(t *testing.T) {
	env := testenv.Start(t)
	ip := hostIP(t)
	listener := recordingListener(t, ip)
	port := redirectingHead(t, ip, listener.url)
	ns := env.Namespace(t)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "rc-head-x", Namespace: ns},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "ray-head", Image: "rayproject/ray:2.60.0"}}}}
	if err := env.Client.Create(t.Context(), pod); err != nil {
		t.Fatal(err)
	}
	if err := testenv.UpdatePodStatus(t.Context(), env.Client, pod, func(p *corev1.Pod) {
		p.Status.Phase, p.Status.PodIP, p.Status.PodIPs = corev1.PodRunning, ip, []corev1.PodIP{{IP: ip}}
	}); err != nil {
		t.Fatal(err)
	}
	exposeHead(t, env.Client, pod, "rc-head-svc", port)

	proxy, err := dashboard.NewKubeProxy(operatorConfig(t, env, ns))
	if err != nil {
		t.Fatal(err)
	}
	cluster := &rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Name: "rc", Namespace: ns}}
	c, err := proxy.Clients()(proxy.DashboardURL(cluster), "")
	if err != nil {
		t.Fatal(err)
	}
	// The API server reads endpoints from an informer: until it has seen
	// them it answers 503.
	testenv.Eventually(t, "the head's redirect refused", 30*time.Second, func() (bool, error) {
		_, err = c.GetJobInfo(t.Context(), "rayjob-1")
		return errors.Is(err, dashboard.ErrRedirect), nil
	})
	t.Logf("through the service proxy: %v", err)
	if err := proxy.ProxyCheck()(t.Context(), pod, port); !errors.Is(err, dashboard.ErrRedirect) {
		t.Errorf("the Serve proxy health check through the Pod's proxy: %v, want a refused redirect", err)
	}
	for _, h := range listener.requests() {
		t.Errorf("the redirect's target got a request with Authorization %q", h.Get("Authorization"))
	}
}

// operatorConfig is a rest.Config that authenticates as a ServiceAccount
// allowed what the operator does through the proxy in ns, with a token
// from the TokenRequest API, as a Pod's projected token would be.
func operatorConfig(t *testing.T, env *testenv.Env, ns string) *rest.Config {
	t.Helper()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "ray-operator", Namespace: ns}}
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "proxy", Namespace: ns}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"services/proxy"}, Verbs: []string{"get", "create", "update", "patch", "delete"}},
		{APIGroups: []string{""}, Resources: []string{"pods/proxy"}, Verbs: []string{"get"}},
	}}
	binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "proxy", Namespace: ns},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "proxy"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa.Name, Namespace: ns}}}
	for _, obj := range []client.Object{sa, role, binding} {
		if err := env.Client.Create(t.Context(), obj); err != nil {
			t.Fatal(err)
		}
	}
	token := &authenticationv1.TokenRequest{}
	if err := env.Client.SubResource("token").Create(t.Context(), sa, token); err != nil {
		t.Fatalf("requesting a ServiceAccount token: %v", err)
	}
	cfg := rest.AnonymousClientConfig(env.Config)
	cfg.BearerToken = token.Status.Token
	return cfg
}

// recorder is a listener on ip that records the headers of every request.
type recorder struct {
	url  string
	mu   sync.Mutex
	seen []http.Header
}

func recordingListener(t *testing.T, ip string) *recorder {
	t.Helper()
	r := &recorder{}
	url, _ := serveOn(t, ip, http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.seen = append(r.seen, req.Header.Clone())
		r.mu.Unlock()
		_, _ = w.Write([]byte(`{"status": "RUNNING"}`))
	}))
	r.url = url
	return r
}

func (r *recorder) requests() []http.Header {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]http.Header(nil), r.seen...)
}

// redirectingHead answers every request on ip with a 302 to target and
// returns its port.
func redirectingHead(t *testing.T, ip, target string) int32 {
	t.Helper()
	_, port := serveOn(t, ip, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target+"/stolen"+r.URL.Path, http.StatusFound)
	}))
	return port
}

// serveOn serves h on a free port of ip and returns its URL and port.
func serveOn(t *testing.T, ip string, h http.Handler) (string, int32) {
	t.Helper()
	l, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	_, p, _ := net.SplitHostPort(l.Addr().String())
	port, _ := strconv.Atoi(p)
	return "http://" + l.Addr().String(), int32(port) //nolint:gosec // a TCP port
}
