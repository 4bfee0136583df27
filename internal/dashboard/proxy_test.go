package dashboard_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ray-operator/ray-operator/internal/dashboard"
)

func TestDirectProxyCheck(t *testing.T) {
	healthy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != dashboard.ServeProxyHealthPath {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		_, _ = w.Write([]byte("success"))
	}))
	defer healthy.Close()
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "draining", http.StatusServiceUnavailable)
	}))
	defer failing.Close()
	hostPort := func(url string) (string, int32) {
		host, port, _ := net.SplitHostPort(url[len("http://"):])
		n, _ := strconv.Atoi(port)
		return host, int32(n)
	}
	check := dashboard.DirectProxyCheck(time.Second)
	for name, tc := range map[string]struct {
		url string
		ip  string
		// want is a substring of the error, "" for healthy.
		want string
	}{
		"200":          {url: healthy.URL},
		"503":          {url: failing.URL, want: "/-/healthz: 503 Service Unavailable: draining"},
		"no pod IP":    {url: healthy.URL, ip: "-", want: "serve proxy health check of Pod ns/head: the Pod has no IP yet"},
		"nobody there": {url: "http://127.0.0.1:1", want: "serve proxy health check: Get \"http://127.0.0.1:1/-/healthz\": dial tcp"},
	} {
		t.Run(name, func(t *testing.T) {
			ip, port := hostPort(tc.url)
			if tc.ip == "-" {
				ip = ""
			}
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "head", Namespace: "ns"}, Status: corev1.PodStatus{PodIP: ip}}
			err := check(context.Background(), pod, port)
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("error = %v, want %q", err, tc.want)
			}
		})
	}
}
