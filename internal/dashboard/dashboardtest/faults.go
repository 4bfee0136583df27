package dashboardtest

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ray-operator/ray-operator/internal/dashboard"
)

// Fault is a way a Ray dashboard fails a request.
type Fault string

// The faults FaultError can produce.
const (
	// FaultServerError is a 500 answer with a Python traceback, as Ray's
	// dashboard gives when the GCS or a job agent is unavailable.
	FaultServerError Fault = "5xx"
	// FaultTimeout is a dashboard that accepts the request and never
	// answers: the client's timeout ends it while awaiting headers.
	FaultTimeout Fault = "timeout"
	// FaultRefused is nothing listening on the dashboard's port (the head
	// restarting).
	FaultRefused Fault = "connection refused"
	// FaultGarbage is a 200 answer that is not JSON (a proxy's HTML page).
	FaultGarbage Fault = "garbage JSON"
	// FaultSlow is an answer that starts but whose body comes too slowly:
	// the client's timeout ends it while reading the body.
	FaultSlow Fault = "slow response"
	// FaultGone is a 404: the dashboard does not know the job (any more).
	FaultGone Fault = "job gone"
	// FaultHuge is a hostile head: a 200 answer of HugeAnswerBytes of
	// small JSON objects, shaped for the request (a job list, a job whose
	// runtime_env nests them, Serve applications), sent without a
	// Content-Length.
	FaultHuge Fault = "huge answer"
)

// HugeAnswerBytes is the size of a FaultHuge answer: more than
// dashboard.MaxAnswerBytes, and less than the 64 MiB the client read and
// decoded in full before it had that bound.
const HugeAnswerBytes = 20_000_000

// Faults lists every Fault but FaultHuge, which streams megabytes for each
// request and is tested on its own.
var Faults = []Fault{FaultServerError, FaultTimeout, FaultRefused, FaultGarbage, FaultSlow, FaultGone}

// OpServeProxyHealth is the health check of a head Pod's Serve proxy
// (GET /-/healthz on the serve port), which is no dashboard call: FaultError
// sends it with dashboard.DirectProxyCheck. As in KubeRay, any 200 is
// healthy, so garbage and a slow body are no failures for it.
const OpServeProxyHealth Op = "ServeProxyHealth"

// FaultClientTimeout is the timeout of the client FaultError sends its
// request with: it bounds how long producing a timeout takes (in real
// time; what the controllers do with the error is tested on fake clocks).
const FaultClientTimeout = 100 * time.Millisecond

// faultTraceback is the body of a FaultServerError answer.
const faultTraceback = "Traceback (most recent call last):\n  File \"dashboard/modules/job/job_head.py\", line 1, in get_job_info\n" +
	"ray.exceptions.RpcError: failed to connect to all addresses; GCS unavailable"

// FaultHandler misbehaves as fault says on every request, as a head
// would; with FaultRefused it answers 418 (a refused connection is no
// answer).
func FaultHandler(fault Fault) http.Handler { return faultHandler(fault) }

// faultHandler misbehaves as fault says on every request.
func faultHandler(fault Fault) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		// The server notices that a client gave up (and cancels r's
		// context) only once the request body was read.
		_, _ = io.Copy(io.Discard, r.Body)
		switch fault {
		case FaultServerError:
			http.Error(w, faultTraceback, http.StatusInternalServerError)
		case FaultTimeout:
			<-r.Context().Done()
		case FaultGarbage:
			w.Header().Set("Content-Type", "text/html")
			_, _ = fmt.Fprint(w, "<html><body><h1>502 Bad Gateway</h1></body></html>")
		case FaultSlow:
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusOK)
			_, _ = fmt.Fprint(w, `{"status": `)
			if f, ok := w.(http.Flusher); ok {
				f.Flush()
			}
			<-r.Context().Done()
		case FaultGone:
			http.Error(w, "Job does not exist", http.StatusNotFound)
		case FaultHuge:
			writeHuge(w, r.URL.Path)
		default:
			http.Error(w, "dashboardtest: unknown fault "+string(fault), http.StatusTeapot)
		}
	}
}

// FaultError returns the error that the real dashboard.HTTPClient gives
// when op (for job jobID, where op names a job) meets fault: the request is
// sent by a real client, with FaultClientTimeout, to an httptest server
// that misbehaves that way, or to a port nothing listens on. Some faults
// are not errors for some ops (a DeleteJob or a PUT of a Serve config does
// not decode its answer, so garbage is success); FaultError then returns
// nil, as the client does. OpServeProxyHealth is sent by the real Serve
// proxy check instead.
func FaultError(ctx context.Context, fault Fault, op Op, jobID string) error {
	baseURL, closeServer, err := faultServer(fault)
	if err != nil {
		return err
	}
	defer closeServer()
	if op == OpServeProxyHealth {
		return proxyCheck(ctx, baseURL)
	}
	client, err := faultClient(baseURL)
	if err != nil {
		return err
	}
	return callOp(ctx, client, op, jobID)
}

// faultClient is a real dashboard client of baseURL with
// FaultClientTimeout.
func faultClient(baseURL string) (*dashboard.HTTPClient, error) {
	return dashboard.NewHTTPClient(baseURL, "", dashboard.WithHTTPClient(&http.Client{Timeout: FaultClientTimeout}))
}

// proxyCheck runs the real direct Serve proxy check against the server at
// baseURL (host:port or http://host:port), as if it were a Pod's serve
// port.
func proxyCheck(ctx context.Context, baseURL string) error {
	host, port, err := net.SplitHostPort(strings.TrimPrefix(baseURL, "http://"))
	if err != nil {
		return err
	}
	n, err := strconv.ParseInt(port, 10, 32)
	if err != nil {
		return err
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "head", Namespace: "ns"}, Status: corev1.PodStatus{PodIP: host}}
	return dashboard.DirectProxyCheck(FaultClientTimeout)(ctx, pod, int32(n))
}

// faultServer starts a server for fault and returns its URL and how to
// stop it; for FaultRefused the URL is a port that was just closed.
func faultServer(fault Fault) (string, func(), error) {
	if fault == FaultRefused {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return "", nil, err
		}
		addr := l.Addr().String()
		if err := l.Close(); err != nil {
			return "", nil, err
		}
		return addr, func() {}, nil
	}
	srv := httptest.NewServer(faultHandler(fault))
	return srv.URL, srv.Close, nil
}

// callOp sends op through client.
func callOp(ctx context.Context, client dashboard.Client, op Op, jobID string) error {
	var err error
	switch op {
	case OpSubmitJob:
		_, err = client.SubmitJob(ctx, &dashboard.JobSubmitRequest{Entrypoint: "python main.py", SubmissionID: jobID})
	case OpGetJobInfo:
		_, err = client.GetJobInfo(ctx, jobID)
	case OpListJobs:
		_, err = client.ListJobs(ctx)
	case OpGetJobLog:
		_, err = client.GetJobLog(ctx, jobID)
	case OpStopJob:
		err = client.StopJob(ctx, jobID)
	case OpDeleteJob:
		err = client.DeleteJob(ctx, jobID)
	case OpUpdateDeployments:
		err = client.UpdateDeployments(ctx, []byte(`{"applications":[]}`))
	case OpGetServeDetails:
		_, err = client.GetServeDetails(ctx)
	case OpGetMultiApplicationStatus:
		_, err = client.GetMultiApplicationStatus(ctx)
	default:
		err = fmt.Errorf("dashboardtest: unknown op %q", op)
	}
	return err
}

// SetFault makes op fail as fault makes the real client fail (see
// FaultError) until SetError(op, nil). jobID is the job the error names.
// It returns the error it set.
func (f *Fake) SetFault(op Op, fault Fault, jobID string) error {
	err := FaultError(context.Background(), fault, op, jobID)
	f.SetError(op, err)
	return err
}

// writeHuge writes a FaultHuge answer to a request for path: HugeAnswerBytes
// of "{}" (each a Go value of up to a few hundred bytes once decoded) where
// the answer to path holds objects, written from one reused buffer.
func writeHuge(w http.ResponseWriter, path string) {
	prefix, element, suffix := "[", "{},", "{}]"
	switch {
	case strings.HasSuffix(path, "/api/serve/applications/"):
		prefix, element, suffix = `{"applications": {`, `"%d": {},`, `"": {}}}`
	case !strings.HasSuffix(path, "/api/jobs/"):
		prefix, suffix = `{"status": "RUNNING", "runtime_env": {"a": [`, "{}]}}"
	}
	before, after, counted := strings.Cut(element, "%d")
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	buf := append(make([]byte, 0, 80<<10), prefix...)
	written := 0
	for i := 0; written+len(buf) < HugeAnswerBytes; i++ {
		buf = append(buf, before...)
		if counted {
			buf = strconv.AppendInt(buf, int64(i), 10)
			buf = append(buf, after...)
		}
		if len(buf) >= 64<<10 {
			n, err := w.Write(buf)
			if err != nil {
				return
			}
			written += n
			buf = buf[:0]
		}
	}
	_, _ = w.Write(append(buf, suffix...))
}
