package podworker

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// TestHTTPProbeMessageIsTheKubelets: a failing answer's body stays out of
// the error, which becomes the Unhealthy event: the kubelet's message
// names the status code only.
func TestHTTPProbeMessageIsTheKubelets(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write([]byte("internal state the pod did not mean to publish"))
	}))
	defer srv.Close()
	sb := &fakeSandbox{}
	target := handlerTarget{ip: sb.IP(), dial: sb.DialContext}
	err := runProbeHandler(t.Context(), target, &corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Host: "127.0.0.1", Port: intstr.FromInt(serverPort(t, srv)), Path: "/"}}, time.Second)
	if err == nil || err.Error() != "HTTP probe failed with statuscode: 500" {
		t.Errorf("err = %v, want exactly %q", err, "HTTP probe failed with statuscode: 500")
	}
}

// TestProbesDialThroughTheSandbox: httpGet and tcpSocket checks connect
// with the target's dial (the pod's network namespace), not the host's.
func TestProbesDialThroughTheSandbox(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	port := intstr.FromInt(serverPort(t, srv))
	refused := errors.New("not from this namespace")
	var dialed []string
	target := handlerTarget{dial: func(_ context.Context, _, address string) (net.Conn, error) {
		dialed = append(dialed, address)
		return nil, refused
	}}
	handlers := map[string]*corev1.ProbeHandler{
		"httpGet":   {HTTPGet: &corev1.HTTPGetAction{Host: "127.0.0.1", Port: port}},
		"tcpSocket": {TCPSocket: &corev1.TCPSocketAction{Host: "127.0.0.1", Port: port}},
	}
	for name, h := range handlers {
		dialed = nil
		err := runProbeHandler(t.Context(), target, h, time.Second)
		if !errors.Is(err, refused) || len(dialed) != 1 || dialed[0] != "127.0.0.1:"+port.String() {
			t.Errorf("%s: err %v after dialing %v; want the sandbox's dial of 127.0.0.1:%s to decide", name, err, dialed, port.String())
		}
	}
}

func serverPort(t *testing.T, srv *httptest.Server) int {
	t.Helper()
	_, p, err := net.SplitHostPort(srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(p)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
