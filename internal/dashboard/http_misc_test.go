package dashboard

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestNormalizeBaseURL(t *testing.T) {
	cases := map[string]struct {
		in, want string
		wantErr  bool
	}{
		"host and port get http":   {in: "head-svc.ns.svc.cluster.local:8265", want: "http://head-svc.ns.svc.cluster.local:8265"},
		"full URL kept":            {in: "https://example.com/proxy", want: "https://example.com/proxy"},
		"trailing slash dropped":   {in: "http://127.0.0.1:8265/", want: "http://127.0.0.1:8265"},
		"empty is an error":        {in: "", wantErr: true},
		"other scheme is an error": {in: "ftp://x:1", wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := normalizeBaseURL(tc.in)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestErrorQuotesABoundedBody(t *testing.T) {
	huge := strings.Repeat("x", 100_000)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write([]byte(huge))
	}))
	t.Cleanup(srv.Close)
	c, err := NewHTTPClient(srv.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.ListJobs(t.Context())
	if err == nil || len(err.Error()) > maxErrorBody+200 || !strings.HasSuffix(err.Error(), "...(truncated)") {
		t.Fatalf("want a short truncated error, got %d bytes", len(err.Error()))
	}
}

func TestTransportErrorsAreErrors(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	c, err := NewHTTPClient(url, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetJobInfo(t.Context(), "t1"); err == nil || !strings.Contains(err.Error(), "GET /api/jobs/t1") {
		t.Errorf("want a connection error naming the request, got %v", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := c.StopJob(ctx, "t1"); err == nil {
		t.Error("want an error for a cancelled context")
	}
}

func TestDefaultTimeout(t *testing.T) {
	c, err := NewHTTPClient("127.0.0.1:8265", "")
	if err != nil {
		t.Fatal(err)
	}
	if c.http.Timeout != DefaultTimeout {
		t.Errorf("timeout = %v, want %v", c.http.Timeout, DefaultTimeout)
	}
	custom := &http.Client{Timeout: 42 * time.Second}
	c, err = NewHTTPClient("127.0.0.1:8265", "", WithHTTPClient(custom))
	if err != nil {
		t.Fatal(err)
	}
	// A copy of it that refuses redirects (TestHandedInClientFollowsNoRedirect).
	if c.http.Timeout != custom.Timeout || c.http.CheckRedirect == nil {
		t.Error("WithHTTPClient was not used")
	}
}

func TestHTTPProvider(t *testing.T) {
	provide := NewHTTPProvider()
	if _, err := provide("127.0.0.1:8265", "tok"); err != nil {
		t.Errorf("provider: %v", err)
	}
	if _, err := provide("ftp://x:1", ""); err == nil {
		t.Error("provider accepted a bad URL")
	}
}
