package dashboard

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
)

// UpdateDeployments puts a multi-application Serve config on the cluster.
func (h *HTTPClient) UpdateDeployments(ctx context.Context, configJSON []byte) error {
	return h.do(ctx, call{method: http.MethodPut, path: serveApplicationsPath, body: configJSON})
}

// GetServeDetails gets the declaratively deployed applications.
func (h *HTTPClient) GetServeDetails(ctx context.Context) (*ServeDetails, error) {
	var details ServeDetails
	err := h.do(ctx, call{
		method: http.MethodGet,
		path:   serveApplicationsPath,
		query:  url.Values{"api_type": {"declarative"}},
		out:    &details,
	})
	if err != nil {
		return nil, err
	}
	return &details, nil
}

// GetMultiApplicationStatus returns each application's status by name.
func (h *HTTPClient) GetMultiApplicationStatus(ctx context.Context) (map[string]*ServeApplicationStatus, error) {
	details, err := h.GetServeDetails(ctx)
	if err != nil {
		return nil, fmt.Errorf("getting serve details: %w", err)
	}
	return details.ApplicationStatuses(), nil
}
