package dashboard_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ray-operator/ray-operator/internal/dashboard"
	"github.com/ray-operator/ray-operator/internal/testing/heappeak"
)

// hostileAnswer is a 200 answer of about size bytes: prefix, element
// repeated (with %d replaced by a counter, for unique keys), and suffix,
// written as it goes without ever being held whole. With declareLength
// it carries a Content-Length, else it is chunked.
type hostileAnswer struct {
	prefix, element, suffix string
	size                    int
	declareLength           bool
}

// serve writes the answer to w, in 64 KiB chunks of one reused buffer,
// so that the server allocates next to nothing.
func (a hostileAnswer) serve(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	if a.declareLength {
		w.Header().Set("Content-Length", strconv.Itoa(a.size))
	}
	w.WriteHeader(http.StatusOK)
	before, after, counted := strings.Cut(a.element, "%d")
	buf := make([]byte, 0, 80<<10)
	written := 0
	flush := func() bool {
		n, err := w.Write(buf)
		written += n
		buf = buf[:0]
		return err == nil
	}
	buf = append(buf, a.prefix...)
	for i := 0; written+len(buf)+len(a.element)+20+len(a.suffix) < a.size; i++ {
		buf = append(buf, before...)
		if counted {
			buf = strconv.AppendInt(buf, int64(i), 10)
			buf = append(buf, after...)
		}
		if len(buf) >= 64<<10 && !flush() {
			return
		}
	}
	// Pad to size exactly (Content-Length) with spaces, which JSON allows.
	for written+len(buf)+len(a.suffix) < a.size {
		buf = append(buf, ' ')
	}
	buf = append(buf, a.suffix...)
	flush()
}

// hostileHead answers every request with a.
func hostileHead(t testing.TB, a hostileAnswer) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { a.serve(w) }))
	t.Cleanup(srv.Close)
	return srv.URL
}

// The hostile answers: small JSON objects, which cost the most to decode
// per byte read, in the places the three polled calls decode them.
var (
	jobListOfEmptyObjects = hostileAnswer{prefix: "[", element: "{},", suffix: "{}]"}
	jobWithNestedObjects  = hostileAnswer{prefix: `{"status": "RUNNING", "runtime_env": {"a": [`, element: "{},", suffix: "{}]}}"}
	serveOfEmptyApps      = hostileAnswer{prefix: `{"applications": {`, element: `"%d": {},`, suffix: `"": {}}}`}
	// jobListAtTheLimit has one object per 64 bytes, as dense as an
	// answer may be: the most decoding may cost per byte read.
	jobListAtTheLimit = hostileAnswer{prefix: "[", element: `{"x": "` + strings.Repeat("x", 54) + `"},`, suffix: "{}]"}
)

// sized returns a with size and declareLength set.
func sized(a hostileAnswer, size int, declareLength bool) hostileAnswer {
	a.size, a.declareLength = size, declareLength
	return a
}

// BenchmarkHostileAnswer measures one poll of a head that answers with
// small JSON objects (see TestHostileAnswersAreRefused): B/op is what the
// poll allocates, peak-heap-MB the largest heap seen while the polls ran
// (the test server's buffers included), refused whether the client
// refused the answer (1) or decoded it (0). It uses only the client's
// exported API, so that it runs on older commits too; the 60 MB answers
// are meant for commits that bound answers (decoding one in full
// allocates ~22 GB).
func BenchmarkHostileAnswer(b *testing.B) {
	const mb = 1_000_000
	calls := map[string]func(context.Context, dashboard.Client) error{
		"ListJobs":        func(ctx context.Context, c dashboard.Client) error { _, err := c.ListJobs(ctx); return err },
		"GetJobInfo":      func(ctx context.Context, c dashboard.Client) error { _, err := c.GetJobInfo(ctx, "job-1"); return err },
		"GetServeDetails": func(ctx context.Context, c dashboard.Client) error { _, err := c.GetServeDetails(ctx); return err },
	}
	for _, bc := range []struct {
		name   string
		call   string
		answer hostileAnswer
	}{
		{"job-list-of-{}/6MB", "ListJobs", sized(jobListOfEmptyObjects, 6*mb, true)},
		{"job-with-nested-{}/6MB", "GetJobInfo", sized(jobWithNestedObjects, 6*mb, true)},
		{"serve-applications/6MB", "GetServeDetails", sized(serveOfEmptyApps, 6*mb, true)},
		{"job-list-of-{}/60MB-chunked", "ListJobs", sized(jobListOfEmptyObjects, 60*mb, false)},
		{"job-list-at-the-limit/6MB", "ListJobs", sized(jobListAtTheLimit, 6*mb, true)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			c, err := dashboard.NewHTTPClient(hostileHead(b, bc.answer), "", dashboard.WithHTTPClient(&http.Client{Timeout: time.Minute}))
			if err != nil {
				b.Fatal(err)
			}
			refused := 0.0
			b.ReportAllocs()
			sampler := heappeak.Start(100 * time.Microsecond)
			for b.Loop() {
				if calls[bc.call](b.Context(), c) != nil {
					refused = 1
				}
			}
			b.ReportMetric(float64(sampler.Stop())/(1<<20), "peak-heap-MB")
			b.ReportMetric(refused, "refused")
		})
	}
}
