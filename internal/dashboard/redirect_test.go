package dashboard_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/dashboard"
)

// elsewhere is a listener on another host:port that a hostile head
// redirects to; it records the headers of every request it gets.
type elsewhere struct {
	srv  *httptest.Server
	mu   sync.Mutex
	seen []http.Header
}

func newElsewhere(t *testing.T) *elsewhere {
	t.Helper()
	e := &elsewhere{}
	e.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.mu.Lock()
		e.seen = append(e.seen, r.Header.Clone())
		e.mu.Unlock()
		_, _ = w.Write([]byte(`{"applications": {}, "status": "RUNNING"}`))
	}))
	t.Cleanup(e.srv.Close)
	return e
}

// requests returns the headers of the requests elsewhere got.
func (e *elsewhere) requests() []http.Header {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]http.Header(nil), e.seen...)
}

// redirectingHead answers every request with status and a Location on
// target.
func redirectingHead(t *testing.T, status int, target string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", target+"/steal"+r.URL.Path)
		w.WriteHeader(status)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// redirectStatuses are the answers net/http follows: 301, 302 and 303
// as a GET, 307 and 308 with the method and body.
var redirectStatuses = []int{
	http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther,
	http.StatusTemporaryRedirect, http.StatusPermanentRedirect,
}

// clientCalls are the dashboard calls the controllers make, by name.
var clientCalls = map[string]func(context.Context, dashboard.Client) error{
	"SubmitJob": func(ctx context.Context, c dashboard.Client) error {
		_, err := c.SubmitJob(ctx, &dashboard.JobSubmitRequest{Entrypoint: "python main.py", SubmissionID: "job-1"})
		return err
	},
	"GetJobInfo": func(ctx context.Context, c dashboard.Client) error {
		_, err := c.GetJobInfo(ctx, "job-1")
		return err
	},
	"ListJobs": func(ctx context.Context, c dashboard.Client) error {
		_, err := c.ListJobs(ctx)
		return err
	},
	"GetJobLog": func(ctx context.Context, c dashboard.Client) error {
		_, err := c.GetJobLog(ctx, "job-1")
		return err
	},
	"StopJob":   func(ctx context.Context, c dashboard.Client) error { return c.StopJob(ctx, "job-1") },
	"DeleteJob": func(ctx context.Context, c dashboard.Client) error { return c.DeleteJob(ctx, "job-1") },
	"UpdateDeployments": func(ctx context.Context, c dashboard.Client) error {
		return c.UpdateDeployments(ctx, []byte(`{"applications": []}`))
	},
	"GetServeDetails": func(ctx context.Context, c dashboard.Client) error {
		_, err := c.GetServeDetails(ctx)
		return err
	},
}

// checkRefused checks that err is a refused redirect naming its target,
// and that nothing reached elsewhere.
func checkRefused(t *testing.T, err error, target *elsewhere) {
	t.Helper()
	if !errors.Is(err, dashboard.ErrRedirect) || !strings.Contains(err.Error(), target.srv.URL+"/steal") {
		t.Errorf("error = %v, want a refused redirect naming %s/steal", err, target.srv.URL)
	}
	for _, h := range target.requests() {
		t.Errorf("the redirect target got a request, x-ray-authorization %q, Authorization %q",
			h.Get(dashboard.AuthHeader), h.Get("Authorization"))
	}
}

// TestDirectClientFollowsNoRedirect: a head that answers every dashboard
// call with a redirect to another listener gets an error back, and the
// listener gets no request (so not the cluster's Ray token either).
func TestDirectClientFollowsNoRedirect(t *testing.T) {
	for _, status := range redirectStatuses {
		for name, call := range clientCalls {
			t.Run(strconv.Itoa(status)+"/"+name, func(t *testing.T) {
				target := newElsewhere(t)
				head := redirectingHead(t, status, target.srv.URL)
				c, err := dashboard.NewHTTPClient(head.URL, "ray-token")
				if err != nil {
					t.Fatal(err)
				}
				checkRefused(t, call(t.Context(), c), target)
			})
		}
	}
}

// TestHandedInClientFollowsNoRedirect: a client given with WithHTTPClient
// follows no redirect either, and is not changed.
func TestHandedInClientFollowsNoRedirect(t *testing.T) {
	target := newElsewhere(t)
	head := redirectingHead(t, http.StatusFound, target.srv.URL)
	custom := &http.Client{Timeout: time.Second}
	c, err := dashboard.NewHTTPClient(head.URL, "ray-token", dashboard.WithHTTPClient(custom))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.ListJobs(t.Context())
	checkRefused(t, err, target)
	if custom.CheckRedirect != nil {
		t.Error("WithHTTPClient's client was changed")
	}
}

// TestDirectProxyCheckFollowsNoRedirect: a Serve proxy that redirects its
// health check is unhealthy, and the target gets no request.
func TestDirectProxyCheckFollowsNoRedirect(t *testing.T) {
	target := newElsewhere(t)
	head := redirectingHead(t, http.StatusFound, target.srv.URL)
	host, port, _ := net.SplitHostPort(strings.TrimPrefix(head.URL, "http://"))
	n, _ := strconv.Atoi(port)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "head", Namespace: "ns"}, Status: corev1.PodStatus{PodIP: host}}
	checkRefused(t, dashboard.DirectProxyCheck(time.Second)(t.Context(), pod, int32(n)), target) //nolint:gosec // a TCP port
}

// TestKubeProxyFollowsNoRedirect: through the API server's proxy
// (--use-kubernetes-proxy) client-go's transport adds the operator's
// bearer token to every request whatever its host; a head whose answer
// (passed on by the API server, here a stand-in) redirects elsewhere must
// not get the token sent there, by the dashboard client or by the Serve
// proxy health check.
func TestKubeProxyFollowsNoRedirect(t *testing.T) {
	const token = "operator-service-account-token"
	for _, status := range redirectStatuses {
		t.Run(strconv.Itoa(status), func(t *testing.T) {
			target := newElsewhere(t)
			apiServer := redirectingHead(t, status, target.srv.URL)
			proxy, err := dashboard.NewKubeProxy(&rest.Config{Host: apiServer.URL, BearerToken: token})
			if err != nil {
				t.Fatal(err)
			}
			cluster := &rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Name: "rc", Namespace: "ns"}}
			c, err := proxy.Clients()(proxy.DashboardURL(cluster), "")
			if err != nil {
				t.Fatal(err)
			}
			for name, call := range clientCalls {
				t.Run(name, func(t *testing.T) { checkRefused(t, call(t.Context(), c), target) })
			}
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "rc-head", Namespace: "ns"}}
			t.Run("ProxyCheck", func(t *testing.T) { checkRefused(t, proxy.ProxyCheck()(t.Context(), pod, 8000), target) })
		})
	}
}
