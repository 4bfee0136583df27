package dashboard

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

const (
	// DefaultTimeout bounds every dashboard request, as KubeRay does, so a
	// hung head cannot stall a reconcile worker.
	DefaultTimeout = 2 * time.Second
	// AuthHeader carries "Bearer <token>" to a cluster with token auth. Ray
	// reads this header rather than Authorization so that proxies in front of
	// the dashboard can keep using Authorization for themselves.
	AuthHeader = "x-ray-authorization"

	jobsPath              = "/api/jobs/"
	serveApplicationsPath = "/api/serve/applications/"
)

// HTTPClient is a Client for one dashboard over HTTP.
type HTTPClient struct {
	baseURL   string
	authToken string
	http      *http.Client
}

var _ Client = (*HTTPClient)(nil)

// Option configures an HTTPClient.
type Option func(*HTTPClient)

// WithHTTPClient sends requests through c (for a proxy or a custom transport)
// instead of a plain client with DefaultTimeout and bounded answer headers.
func WithHTTPClient(c *http.Client) Option {
	return func(h *HTTPClient) { h.http = c }
}

// NewHTTPClient returns a client for the dashboard at baseURL, which is either
// host:port (http is assumed, as the head Service URL is) or a full URL.
func NewHTTPClient(baseURL, authToken string, opts ...Option) (*HTTPClient, error) {
	normalized, err := normalizeBaseURL(baseURL)
	if err != nil {
		return nil, err
	}
	c := &HTTPClient{
		baseURL:   normalized,
		authToken: authToken,
		http:      &http.Client{Timeout: DefaultTimeout, Transport: directTransport},
	}
	for _, opt := range opts {
		opt(c)
	}
	c.http = refusingRedirects(c.http)
	return c, nil
}

// NewHTTPProvider returns a ClientProvider that builds HTTPClients with opts.
func NewHTTPProvider(opts ...Option) ClientProvider {
	return func(baseURL, authToken string) (Client, error) {
		return NewHTTPClient(baseURL, authToken, opts...)
	}
}

// normalizeBaseURL adds the http scheme when missing, checks that a host is
// present and drops a trailing slash so paths can be appended.
func normalizeBaseURL(raw string) (string, error) {
	if !strings.Contains(raw, "://") {
		raw = "http://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("ray dashboard URL %q: %w", raw, err)
	}
	if u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return "", fmt.Errorf("ray dashboard URL %q: want http(s)://host:port", raw)
	}
	return strings.TrimRight(u.String(), "/"), nil
}

// call is one request: where it goes, what it sends, where the answer goes.
type call struct {
	method string
	path   string
	query  url.Values
	body   []byte // sent as JSON when not nil
	out    any    // a 2xx JSON answer is decoded into it when not nil
}

// do sends c and turns every failure into an error that names the request:
// transport errors, non-2xx answers (*HTTPError) and unparsable bodies.
func (h *HTTPClient) do(ctx context.Context, c call) error {
	req, err := h.newRequest(ctx, c)
	if err != nil {
		return err
	}
	resp, err := h.http.Do(req)
	if err != nil {
		return fmt.Errorf("ray dashboard %s %s: %w", c.method, c.path, requestError(err))
	}
	defer func() { _ = resp.Body.Close() }()
	read, err := readAnswer(ctx, resp, MaxAnswerBytes, h.budgetWait())
	switch {
	case errors.Is(err, ErrAnswerTooLarge):
		return fmt.Errorf("ray dashboard %s %s: %w", c.method, c.path, err)
	case err != nil:
		return fmt.Errorf("ray dashboard %s %s: reading answer: %w", c.method, c.path, err)
	}
	defer read.release()
	body := read.body
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return newHTTPError(c, resp.StatusCode, body)
	}
	if c.out == nil {
		return nil
	}
	if err := checkShape(body); err != nil {
		return fmt.Errorf("ray dashboard %s %s: %w", c.method, c.path, err)
	}
	if err := json.Unmarshal(body, c.out); err != nil {
		return fmt.Errorf("ray dashboard %s %s: unparsable answer (status %d): %w: %q",
			c.method, c.path, resp.StatusCode, err, snippet(body))
	}
	return nil
}

// budgetWait is how long a large answer may wait for its share of the
// answer budget: the client's timeout, which would end its reading anyway.
func (h *HTTPClient) budgetWait() time.Duration {
	if h.http.Timeout > 0 {
		return h.http.Timeout
	}
	return DefaultTimeout
}

// newRequest builds the HTTP request for c, with the auth header when a
// token is configured.
func (h *HTTPClient) newRequest(ctx context.Context, c call) (*http.Request, error) {
	target := h.baseURL + c.path
	if len(c.query) > 0 {
		target += "?" + c.query.Encode()
	}
	var body io.Reader
	if c.body != nil {
		body = bytes.NewReader(c.body)
	}
	req, err := http.NewRequestWithContext(ctx, c.method, target, body)
	if err != nil {
		return nil, fmt.Errorf("ray dashboard %s %s: %w", c.method, c.path, err)
	}
	if c.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if h.authToken != "" {
		req.Header.Set(AuthHeader, "Bearer "+h.authToken)
	}
	return req, nil
}

// newHTTPError records a non-2xx answer. Whether the submission id was taken
// is decided on the whole body, because Ray puts that sentence at the end of
// a long traceback that the quoted snippet may cut.
func newHTTPError(c call, status int, body []byte) *HTTPError {
	return &HTTPError{
		Method:            c.method,
		Path:              c.path,
		StatusCode:        status,
		Body:              snippet(body),
		submissionIDInUse: bytes.Contains(body, []byte(submissionIDInUseMarker)),
	}
}

// jobPath is the path of one job, or of one of its sub-resources.
func jobPath(jobID string, sub ...string) (string, error) {
	if jobID == "" {
		return "", errors.New("ray dashboard: empty job id")
	}
	return jobsPath + strings.Join(append([]string{url.PathEscape(jobID)}, sub...), "/"), nil
}
