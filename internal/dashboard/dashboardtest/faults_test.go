package dashboardtest

import (
	"errors"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"testing"

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
// the real client: a DeleteJob does not decode its answer, so garbage is
// success, and a StopJob names its own path.
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
