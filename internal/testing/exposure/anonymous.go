package exposure

import (
	"context"
	"crypto/tls"
	"net/http"
	"time"
)

// AnonymousStatus GETs url over HTTPS as a stranger would: no credentials,
// no client certificate, the server's certificate not verified. It returns
// the answer's status code: an API server that refuses anonymous requests
// answers 401 Unauthorized.
func AnonymousStatus(ctx context.Context, url string) (int, error) {
	client := &http.Client{
		Timeout:   10 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, //nolint:gosec // a stranger does not know the CA
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	_ = resp.Body.Close()
	return resp.StatusCode, nil
}
