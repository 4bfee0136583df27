// Package kubeproxy_test calls a dashboard through a real kube-apiserver's
// service and pod proxy (--use-kubernetes-proxy): the head Service and its
// endpoints point at an HTTP server on this machine's own address, as a
// Ray head's would.
package kubeproxy_test

import (
	"encoding/json"
	"net"
	"net/http"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/dashboard"
	"github.com/ray-operator/ray-operator/internal/testing/capability"
	"github.com/ray-operator/ray-operator/internal/testing/testenv"
)

func TestDashboardThroughTheAPIServer(t *testing.T) {
	env := testenv.Start(t)
	ip := hostIP(t)
	port, seen := fakeHead(t, ip)
	ns := env.Namespace(t)
	cluster := &rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Name: "rc", Namespace: ns}}
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

	proxy, err := dashboard.NewKubeProxy(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	access := dashboard.Access{Secrets: env.Client, Clients: proxy.Clients(), Proxy: proxy}
	c, err := access.Client(t.Context(), cluster, "ignored:8265")
	if err != nil {
		t.Fatal(err)
	}
	// The API server reads endpoints from an informer: wait until it
	// has seen them.
	var info *dashboard.JobInfo
	testenv.Eventually(t, "job info through the API server", 30*time.Second, func() (bool, error) {
		info, err = c.GetJobInfo(t.Context(), "rayjob-1")
		return err == nil, err
	})
	if info.JobStatus != rayv1.JobStatusRunning || info.SubmissionID != "rayjob-1" {
		t.Errorf("job info = %+v, want rayjob-1 RUNNING", info)
	}
	if got := <-seen; got != "/api/jobs/rayjob-1" {
		t.Errorf("the head was asked for %q, want /api/jobs/rayjob-1", got)
	}
	if err := proxy.ProxyCheck()(t.Context(), pod, port); err != nil {
		t.Errorf("the Serve proxy health check through the Pod's proxy failed: %v", err)
	}
	if got := <-seen; got != dashboard.ServeProxyHealthPath {
		t.Errorf("the health check asked for %q, want %s", got, dashboard.ServeProxyHealthPath)
	}
}

// hostIP is a non-loopback address of this machine: the API server refuses
// to proxy to loopback addresses.
func hostIP(t *testing.T) string {
	t.Helper()
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && !n.IP.IsLoopback() && !n.IP.IsLinkLocalUnicast() {
			return n.IP.String()
		}
	}
	capability.Missing(t, "no non-loopback IPv4 address to put behind the Service")
	return ""
}

// fakeHead serves a job info and a Serve health check on ip and reports
// every path it is asked for.
func fakeHead(t *testing.T, ip string) (int32, <-chan string) {
	t.Helper()
	seen := make(chan string, 10)
	mux := http.NewServeMux()
	mux.HandleFunc("/api/jobs/{id}", func(w http.ResponseWriter, r *http.Request) {
		seen <- r.URL.Path
		_ = json.NewEncoder(w).Encode(map[string]any{"submission_id": r.PathValue("id"), "status": "RUNNING"})
	})
	mux.HandleFunc(dashboard.ServeProxyHealthPath, func(w http.ResponseWriter, r *http.Request) {
		seen <- r.URL.Path
		_, _ = w.Write([]byte("success"))
	})
	l, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 0}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	_, p, _ := net.SplitHostPort(l.Addr().String())
	port, _ := strconv.Atoi(p)
	return int32(port), seen //nolint:gosec // a TCP port
}

// exposeHead makes a head Service whose dashboard port is the fake head,
// behind the head Pod (the service proxy only goes to addresses of Pods).
func exposeHead(t *testing.T, c client.Client, pod *corev1.Pod, name string, port int32) {
	t.Helper()
	ns, ip := pod.Namespace, pod.Status.PodIP
	podRef := &corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: pod.Name}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: rayv1.DashboardPortName, Port: 8265}}}}
	endpoints := &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, //nolint:staticcheck // what the service proxy reads
		Subsets: []corev1.EndpointSubset{{Addresses: []corev1.EndpointAddress{{IP: ip, TargetRef: podRef}}, //nolint:staticcheck // idem
			Ports: []corev1.EndpointPort{{Name: rayv1.DashboardPortName, Port: port}}}}}
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: name + "-x", Namespace: ns, Labels: map[string]string{discoveryv1.LabelServiceName: name}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{ip}, TargetRef: podRef, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}},
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To(rayv1.DashboardPortName), Port: ptr.To(port)}},
	}
	for _, obj := range []client.Object{svc, endpoints, slice} {
		if err := c.Create(t.Context(), obj); err != nil {
			t.Fatal(err)
		}
	}
}
