package dashboard_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

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
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer failing.Close()
	hostPort := func(url string) (string, int32) {
		host, port, _ := net.SplitHostPort(url[len("http://"):])
		n, _ := strconv.Atoi(port)
		return host, int32(n)
	}
	check := dashboard.DirectProxyCheck(time.Second)
	for name, tc := range map[string]struct {
		url  string
		ip   string
		want bool
	}{
		"200":          {url: healthy.URL, want: true},
		"503":          {url: failing.URL, want: false},
		"no pod IP":    {url: healthy.URL, ip: "-", want: false},
		"nobody there": {url: "http://127.0.0.1:1", want: false},
	} {
		t.Run(name, func(t *testing.T) {
			ip, port := hostPort(tc.url)
			if tc.ip == "-" {
				ip = ""
			}
			pod := &corev1.Pod{Status: corev1.PodStatus{PodIP: ip}}
			if got := check(context.Background(), pod, port); got != tc.want {
				t.Errorf("healthy = %v, want %v", got, tc.want)
			}
		})
	}
}
