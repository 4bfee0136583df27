package dashboard_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ray-operator/ray-operator/internal/dashboard"
)

// allocatedBy returns the bytes f allocates (the whole process: the test
// server's writes count too).
func allocatedBy(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestHostileAnswersAreRefused: a head answering a poll with megabytes of
// small JSON objects gets an error that says why, and what the client
// allocated stays within a small multiple of MaxAnswerBytes; before, the
// 6 MB answers (under the old 64 MiB read limit) were decoded, at ~380
// bytes allocated per byte read for the job list.
func TestHostileAnswersAreRefused(t *testing.T) {
	const mb = 1_000_000
	getJobInfo := func(ctx context.Context, c dashboard.Client) error { _, err := c.GetJobInfo(ctx, "job-1"); return err }
	listJobs := func(ctx context.Context, c dashboard.Client) error { _, err := c.ListJobs(ctx); return err }
	getServe := func(ctx context.Context, c dashboard.Client) error { _, err := c.GetServeDetails(ctx); return err }
	for name, tc := range map[string]struct {
		answer hostileAnswer
		call   func(context.Context, dashboard.Client) error
		want   string
	}{
		"6 MB job list of {}": {
			answer: sized(jobListOfEmptyObjects, 6*mb, true), call: listJobs,
			want: "ray dashboard GET /api/jobs/: answer too large to decode:",
		},
		"6 MB job with nested {}": {
			answer: sized(jobWithNestedObjects, 6*mb, false), call: getJobInfo,
			want: "ray dashboard GET /api/jobs/job-1: answer too large to decode:",
		},
		"6 MB of Serve applications": {
			answer: sized(serveOfEmptyApps, 6*mb, true), call: getServe,
			want: "ray dashboard GET /api/serve/applications/: answer too large to decode:",
		},
		"60 MB job list, chunked": {
			answer: sized(jobListOfEmptyObjects, 60*mb, false), call: listJobs,
			want: fmt.Sprintf("ray dashboard GET /api/jobs/: answer too large: more than %d bytes", dashboard.MaxAnswerBytes),
		},
		"60 MB job list, with its length": {
			answer: sized(jobListOfEmptyObjects, 60*mb, true), call: listJobs,
			want: fmt.Sprintf("ray dashboard GET /api/jobs/: answer too large: more than %d bytes", dashboard.MaxAnswerBytes),
		},
		"60 MB of Serve applications, chunked": {
			answer: sized(serveOfEmptyApps, 60*mb, false), call: getServe,
			want: fmt.Sprintf("ray dashboard GET /api/serve/applications/: answer too large: more than %d bytes", dashboard.MaxAnswerBytes),
		},
	} {
		t.Run(name, func(t *testing.T) {
			c, err := dashboard.NewHTTPClient(hostileHead(t, tc.answer), "")
			if err != nil {
				t.Fatal(err)
			}
			var callErr error
			allocated := allocatedBy(func() { callErr = tc.call(t.Context(), c) })
			if !errors.Is(callErr, dashboard.ErrAnswerTooLarge) || !strings.Contains(callErr.Error(), tc.want) {
				t.Errorf("error = %v, want ErrAnswerTooLarge containing %q", callErr, tc.want)
			}
			// The body read (at most MaxAnswerBytes, in a buffer that
			// doubles), the server's chunks and the transport's buffers.
			t.Logf("%s: the call allocated %.1f MB", callErr, float64(allocated)/mb)
			if limit := uint64(4 * dashboard.MaxAnswerBytes); allocated > limit {
				t.Errorf("the call allocated %d MB, want at most %d MB", allocated/mb, limit/mb)
			}
		})
	}
}

// realSample reads one of Ray 2.60's own answers kept in testdata.
func realSample(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestRealAnswersAtScaleAreRead: Ray's own answers at the scale the
// bounds are sized for stay within them: 10,000 jobs listed, and a
// RayService of 1,000 deployments with 4 replicas each on 3,400 nodes.
func TestRealAnswersAtScaleAreRead(t *testing.T) {
	var jobs []map[string]any
	if err := json.Unmarshal(realSample(t, "ray-2.60-jobs.json"), &jobs); err != nil {
		t.Fatal(err)
	}
	var many []map[string]any
	for i := range 10_000 {
		job := map[string]any{}
		for k, v := range jobs[i%len(jobs)] {
			job[k] = v
		}
		job["submission_id"] = fmt.Sprintf("rayjob-sample-%05d-abcde", i)
		many = append(many, job)
	}
	jobList, err := json.Marshal(many)
	if err != nil {
		t.Fatal(err)
	}

	var serve map[string]any
	if err := json.Unmarshal(realSample(t, "ray-2.60-serve-applications.json"), &serve); err != nil {
		t.Fatal(err)
	}
	apps := serve["applications"].(map[string]any)
	app := apps["app2"].(map[string]any)
	deployment := app["deployments"].(map[string]any)["Hello2"].(map[string]any)
	deployments := map[string]any{}
	for i := range 1_000 {
		d := map[string]any{}
		for k, v := range deployment {
			d[k] = v
		}
		d["name"] = fmt.Sprintf("Deployment%04d", i)
		deployments[d["name"].(string)] = d
	}
	app["deployments"] = deployments
	proxy := serve["proxies"].(map[string]any)
	var oneProxy any
	for _, p := range proxy {
		oneProxy = p
	}
	proxies := map[string]any{}
	for i := range 3_400 {
		proxies[fmt.Sprintf("%056x", i)] = oneProxy
	}
	serve["proxies"] = proxies
	serve["applications"] = map[string]any{"app": app}
	details, err := json.Marshal(serve)
	if err != nil {
		t.Fatal(err)
	}

	for name, tc := range map[string]struct {
		body []byte
		call func(context.Context, dashboard.Client) (int, error)
		want int
	}{
		"10,000 jobs": {body: jobList, want: 10_000, call: func(ctx context.Context, c dashboard.Client) (int, error) {
			jobs, err := c.ListJobs(ctx)
			return len(jobs), err
		}},
		"1,000 deployments, 4,000 replicas, 3,400 proxies": {body: details, want: 1_000, call: func(ctx context.Context, c dashboard.Client) (int, error) {
			d, err := c.GetServeDetails(ctx)
			return len(d.Applications["app"].Deployments), err
		}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Logf("%d bytes, one object or array per %d bytes", len(tc.body), len(tc.body)/max(1, strings.Count(string(tc.body), "{")+strings.Count(string(tc.body), "[")))
			if len(tc.body) > dashboard.MaxAnswerBytes/4*3 {
				t.Errorf("%d bytes: less than a third of MaxAnswerBytes left", len(tc.body))
			}
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write(tc.body)
			}))
			t.Cleanup(srv.Close)
			c, err := dashboard.NewHTTPClient(srv.URL, "")
			if err != nil {
				t.Fatal(err)
			}
			got, err := tc.call(t.Context(), c)
			if err != nil || got != tc.want {
				t.Errorf("got %d (%v), want %d", got, err, tc.want)
			}
		})
	}
}

// TestHugeHeadersAreRefused: a head answering with a megabyte of headers
// is refused by the client and by the Serve proxy check, on a direct
// connection (net/http's default would take 10 MiB).
func TestHugeHeadersAreRefused(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		for i := range 1024 {
			w.Header().Set(fmt.Sprintf("X-Padding-%d", i), strings.Repeat("x", 1024))
		}
		_, _ = w.Write([]byte(`{"status": "RUNNING"}`))
	}))
	t.Cleanup(srv.Close)
	c, err := dashboard.NewHTTPClient(srv.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetJobInfo(t.Context(), "job-1"); err == nil || !strings.Contains(err.Error(), "server response headers exceeded") {
		t.Errorf("GetJobInfo: %v, want headers refused", err)
	}
	host, port, _ := strings.Cut(strings.TrimPrefix(srv.URL, "http://"), ":")
	n, _ := strconv.Atoi(port)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "head", Namespace: "ns"}, Status: corev1.PodStatus{PodIP: host}}
	if err := dashboard.DirectProxyCheck(time.Second)(t.Context(), pod, int32(n)); err == nil || !strings.Contains(err.Error(), "server response headers exceeded") { //nolint:gosec // a TCP port
		t.Errorf("DirectProxyCheck: %v, want headers refused", err)
	}
}
