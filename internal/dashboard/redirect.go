package dashboard

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
)

// ErrRedirect matches a request that the head answered with a redirect.
// No client of this package follows one: Ray's dashboard and Serve proxy
// never redirect the requests the operator sends (Ray 2.60, checked by
// test/e2e/dashboard's TestRayDoesNotRedirect), so a redirect comes from
// something else on the head's ports, and following it would send the
// operator's credentials there: the x-ray-authorization token, and with
// --use-kubernetes-proxy the operator's own API server credentials, which
// client-go's transport adds to every request whatever its host. Following
// it without credentials would still be a request forgery from inside the
// cluster, its answer shown in status messages and events.
var ErrRedirect = errors.New("redirect refused: the operator follows no redirect from a Ray head")

// maxLocationQuoted bounds how much of a redirect's target an error quotes:
// a Location header can be megabytes long.
const maxLocationQuoted = 256

// redirectError is a refused redirect: the redirect's status and the start
// of its target.
type redirectError struct {
	status, location string
}

func (e *redirectError) Error() string {
	return fmt.Sprintf("%v (%s to %s)", ErrRedirect, e.status, e.location)
}

func (e *redirectError) Is(target error) bool { return target == ErrRedirect }

// refusingRedirects returns a copy of c that follows no redirect: Do
// returns a *redirectError and sends no second request. Every client the
// package sends requests with is made by it, including one handed in with
// WithHTTPClient, which is copied rather than changed.
func refusingRedirects(c *http.Client) *http.Client {
	refusing := *c
	refusing.CheckRedirect = refuseRedirect
	return &refusing
}

// refuseRedirect is an http.Client CheckRedirect that refuses every
// redirect. req is the request the redirect asks for, req.Response the
// redirect.
func refuseRedirect(req *http.Request, _ []*http.Request) error {
	e := &redirectError{status: "redirect", location: req.URL.Redacted()}
	if req.Response != nil {
		e.status = req.Response.Status
	}
	if len(e.location) > maxLocationQuoted {
		e.location = e.location[:maxLocationQuoted] + "...(truncated)"
	}
	return e
}

// requestError is what Do's err says: a refused redirect as it is (the
// *url.Error around it would repeat its whole target), anything else
// unchanged.
func requestError(err error) error {
	var redirect *redirectError
	var urlErr *url.Error
	if errors.As(err, &urlErr) && errors.As(err, &redirect) {
		return redirect
	}
	return err
}
