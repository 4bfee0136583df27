package dashboardtest

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ray-operator/ray-operator/internal/dashboard"
)

// timeoutErr reports whether err is a timeout (a net.Error whose Timeout()
// is true), as http.Client gives while sending or reading the body.
func timeoutErr(err error) bool {
	var nerr net.Error
	return errors.As(err, &nerr) && nerr.Timeout()
}

// urlTimeout reports whether err is a *url.Error timeout, as http.Client.Do
// returns when no answer came in time.
func urlTimeout(err error) bool {
	var uerr *url.Error
	return errors.As(err, &uerr) && uerr.Timeout()
}

// httpStatus is the status of an *dashboard.HTTPError, 0 for other errors.
func httpStatus(err error) int {
	var herr *dashboard.HTTPError
	if errors.As(err, &herr) {
		return herr.StatusCode
	}
	return 0
}

// TestFaultErrors: each fault gives, through the real HTTP client, the
// error value the controllers must recognise, and the message names the
// request.
func TestFaultErrors(t *testing.T) {
	tests := map[Fault]struct {
		check   func(error) bool
		message string
	}{
		FaultServerError: {
			check:   func(err error) bool { return httpStatus(err) == http.StatusInternalServerError },
			message: "ray dashboard GET /api/jobs/j: 500 Internal Server Error: Traceback",
		},
		FaultTimeout: {
			check:   func(err error) bool { return urlTimeout(err) && timeoutErr(err) },
			message: "Client.Timeout exceeded while awaiting headers",
		},
		FaultRefused: {
			check:   func(err error) bool { return errors.Is(err, syscall.ECONNREFUSED) },
			message: "connect: connection refused",
		},
		FaultGarbage: {
			check:   func(err error) bool { return httpStatus(err) == 0 && !timeoutErr(err) },
			message: `ray dashboard GET /api/jobs/j: unparsable answer (status 200)`,
		},
		FaultSlow: {
			check:   func(err error) bool { return timeoutErr(err) && !urlTimeout(err) },
			message: "ray dashboard GET /api/jobs/j: reading answer: context deadline exceeded",
		},
		FaultGone: {
			check: func(err error) bool {
				return errors.Is(err, dashboard.ErrNotFound) && httpStatus(err) == http.StatusNotFound
			},
			message: "ray dashboard GET /api/jobs/j: 404 Not Found: Job does not exist",
		},
	}
	if len(tests) != len(Faults) {
		t.Fatalf("%d cases for %d faults", len(tests), len(Faults))
	}
	for _, fault := range Faults {
		t.Run(string(fault), func(t *testing.T) {
			tc := tests[fault]
			err := FaultError(t.Context(), fault, OpGetJobInfo, "j")
			if err == nil {
				t.Fatal("no error")
			}
			if !tc.check(err) {
				t.Errorf("error %#v (%v) is not of the expected kind", err, err)
			}
			if !strings.Contains(err.Error(), tc.message) {
				t.Errorf("error %q, want it to contain %q", err, tc.message)
			}
			if fault != FaultGone && errors.Is(err, dashboard.ErrNotFound) {
				t.Errorf("error %v matches ErrNotFound", err)
			}
		})
	}
}

// TestFaultErrorsPerOp: the request an op sends decides the error, as in
// the real client: a DeleteJob or a PUT of a Serve config does not decode
// its answer, so garbage is success; a StopJob names its own path; the
// Serve proxy check (the real DirectProxyCheck) takes any 200 as healthy.
func TestFaultErrorsPerOp(t *testing.T) {
	tests := []struct {
		op      Op
		fault   Fault
		message string // "" means no error
	}{
		{OpSubmitJob, FaultServerError, "ray dashboard POST /api/jobs/: 500"},
		{OpStopJob, FaultGarbage, "ray dashboard POST /api/jobs/j/stop: unparsable answer"},
		{OpDeleteJob, FaultGarbage, ""},
		{OpGetServeDetails, FaultRefused, "ray dashboard GET /api/serve/applications/:"},
		{OpUpdateDeployments, FaultServerError, "ray dashboard PUT /api/serve/applications/: 500"},
		{OpListJobs, FaultTimeout, "ray dashboard GET /api/jobs/:"},
		{OpUpdateDeployments, FaultGarbage, ""},
		{OpUpdateDeployments, FaultSlow, "ray dashboard PUT /api/serve/applications/: reading answer: context deadline exceeded"},
		{OpGetServeDetails, FaultGarbage, "ray dashboard GET /api/serve/applications/: unparsable answer (status 200)"},
		{OpServeProxyHealth, FaultServerError, "/-/healthz: 500 Internal Server Error: Traceback"},
		{OpServeProxyHealth, FaultTimeout, "serve proxy health check: Get \"http://"},
		{OpServeProxyHealth, FaultRefused, "connect: connection refused"},
		{OpServeProxyHealth, FaultGone, "/-/healthz: 404 Not Found"},
		{OpServeProxyHealth, FaultGarbage, ""},
		{OpServeProxyHealth, FaultSlow, ""},
		// A POST whose body the fault server must read to notice the
		// client giving up, as for the PUT above.
		{OpSubmitJob, FaultTimeout, "ray dashboard POST /api/jobs/:"},
		{OpSubmitJob, FaultSlow, "ray dashboard POST /api/jobs/:"},
	}
	for _, tc := range tests {
		t.Run(string(tc.op)+" "+string(tc.fault), func(t *testing.T) {
			err := FaultError(t.Context(), tc.fault, tc.op, "j")
			if tc.message == "" {
				if err != nil {
					t.Fatalf("error %v, want none", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.message) {
				t.Fatalf("error %v, want one containing %q", err, tc.message)
			}
		})
	}
}

// TestFakeSetFault: a fault set on the Fake is the real client's error
// until cleared; the Fake's own 404 is the real client's error too.
func TestFakeSetFault(t *testing.T) {
	ctx := t.Context()
	f := NewFake()
	f.AddJob(dashboard.JobInfo{SubmissionID: "j", JobStatus: "RUNNING"})
	set := f.SetFault(OpGetJobInfo, FaultServerError, "j")
	if _, err := f.GetJobInfo(ctx, "j"); err != set || httpStatus(err) != http.StatusInternalServerError { //nolint:errorlint // the same value
		t.Errorf("GetJobInfo = %v, want the 500 it was given", err)
	}
	f.SetError(OpGetJobInfo, nil)
	info, err := f.GetJobInfo(ctx, "j")
	if err != nil || info.JobStatus != "RUNNING" {
		t.Fatalf("after clearing: %v, %v", info, err)
	}

	f.ForgetJob("j")
	_, fakeErr := f.GetJobInfo(ctx, "j")
	realErr := FaultError(ctx, FaultGone, OpGetJobInfo, "j")
	var fakeHTTP, realHTTP *dashboard.HTTPError
	if !errors.As(fakeErr, &fakeHTTP) || !errors.As(realErr, &realHTTP) {
		t.Fatalf("fake %v, real %v: want *HTTPError", fakeErr, realErr)
	}
	fakeHTTP.Body, realHTTP.Body = "", ""
	if diff := cmp.Diff(realHTTP, fakeHTTP, cmp.AllowUnexported(dashboard.HTTPError{})); diff != "" {
		t.Errorf("forgotten job's error (-real +fake):\n%s", diff)
	}
}

// TestServeFleetSetFault: a fault set on one op of the clusters under a
// prefix is the real client's error for that op only, every call is
// counted, and clearing it brings the answers back.
func TestServeFleetSetFault(t *testing.T) {
	ctx := t.Context()
	fleet := NewServeFleet()
	provider := fleet.Provider()
	a, _ := provider("a-head-svc:8265", "")
	b, _ := provider("b-head-svc:8265", "")
	set := fleet.SetFault("a-", OpGetServeDetails, FaultServerError)
	if _, err := a.GetServeDetails(ctx); err != set || httpStatus(err) != http.StatusInternalServerError { //nolint:errorlint // the same value
		t.Errorf("GetServeDetails of a = %v, want the 500 it was given", err)
	}
	if err := a.UpdateDeployments(ctx, []byte(`{"applications":[{"name":"app"}]}`)); err != nil {
		t.Errorf("UpdateDeployments of a = %v, want no fault on PUTs", err)
	}
	if _, err := b.GetServeDetails(ctx); err != nil {
		t.Errorf("GetServeDetails of b = %v, want no fault outside the prefix", err)
	}
	fleet.SetOpError("a-", OpGetServeDetails, nil)
	details, err := a.GetServeDetails(ctx)
	if err != nil || details.Applications["app"].Status != "RUNNING" {
		t.Fatalf("after clearing: %+v, %v", details, err)
	}
	got := []int{fleet.Calls("a-head-svc:8265", OpGetServeDetails), fleet.Calls("a-head-svc:8265", OpUpdateDeployments),
		fleet.Calls("b-head-svc:8265", OpGetServeDetails)}
	if diff := cmp.Diff([]int{2, 1, 1}, got); diff != "" {
		t.Errorf("calls (a GET, a PUT, b GET) (-want +got):\n%s", diff)
	}
}

// TestServeServer: the fleet behind a real HTTP server answers the real
// client's GET and PUT per cluster, and a fault set for a cluster gives
// the same kind of error as FaultError, for that cluster only.
func TestServeServer(t *testing.T) {
	ctx := t.Context()
	fleet := NewServeFleet()
	srv, err := NewServeServer(fleet, FaultClientTimeout)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	const urlA, urlB = "a-head-svc.ns.svc.cluster.local:8265", "b-head-svc.ns.svc.cluster.local:8265"
	a, err := srv.Provider()(urlA, "")
	if err != nil {
		t.Fatal(err)
	}
	b, err := srv.Provider()(urlB, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := a.UpdateDeployments(ctx, []byte(`{"applications":[{"name":"app"}],"target_capacity":50}`)); err != nil {
		t.Fatal(err)
	}
	details, err := a.GetServeDetails(ctx)
	if err != nil || details.Applications["app"].Status != "RUNNING" || details.TargetCapacity == nil || *details.TargetCapacity != 50 {
		t.Fatalf("GetServeDetails = %+v, %v", details, err)
	}
	if n := len(fleet.Configs(urlA)); n != 1 {
		t.Errorf("%d configs on a, want 1", n)
	}
	for _, fault := range Faults {
		t.Run(string(fault), func(t *testing.T) {
			srv.SetFault("a-", fault)
			defer srv.SetFault("a-", "")
			a, _ := srv.Provider()(urlA, "")
			_, got := a.GetServeDetails(ctx)
			want := FaultError(ctx, fault, OpGetServeDetails, "")
			if got == nil || httpStatus(got) != httpStatus(want) || timeoutErr(got) != timeoutErr(want) ||
				errors.Is(got, syscall.ECONNREFUSED) != errors.Is(want, syscall.ECONNREFUSED) {
				t.Errorf("GetServeDetails through the server = %v, want an error like %v", got, want)
			}
			if _, err := b.GetServeDetails(ctx); err != nil {
				t.Errorf("b failed too: %v", err)
			}
		})
	}
}

// TestFaultHuge: a huge answer of small objects is refused by the real
// client for each call that decodes one, as too large.
func TestFaultHuge(t *testing.T) {
	srv := httptest.NewServer(faultHandler(FaultHuge))
	t.Cleanup(srv.Close)
	c, err := dashboard.NewHTTPClient(srv.URL, "", dashboard.WithHTTPClient(&http.Client{Timeout: time.Minute}))
	if err != nil {
		t.Fatal(err)
	}
	for op, path := range map[Op]string{OpGetJobInfo: "/api/jobs/j", OpListJobs: "/api/jobs/", OpGetServeDetails: "/api/serve/applications/"} {
		err := callOp(t.Context(), c, op, "j")
		want := fmt.Sprintf("ray dashboard GET %s: answer too large: more than %d bytes", path, dashboard.MaxAnswerBytes)
		if !errors.Is(err, dashboard.ErrAnswerTooLarge) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", op, err, want)
		}
	}
}
