package dashboard

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A Serve answer with one application and one deployment.
const serveDetailsJSON = `{"deploy_mode": "MULTI_APP", "applications": {"app1": {"name": "app1", "status": "RUNNING",
 "message": "", "route_prefix": "/", "docs_path": null, "deployments": {"d1": {"name": "d1", "status": "HEALTHY",
 "message": "ok", "route_prefix": null}}}}}`

func TestHTTPClientServe(t *testing.T) {
	cases := map[string]struct {
		answers  map[string]answer
		call     func(context.Context, *HTTPClient) (any, error)
		want     any
		errText  string
		wantSeen []seenRequest
	}{
		"update deployments puts the config as is": {
			answers: map[string]answer{"PUT /api/serve/applications/": {200, ""}},
			call: func(ctx context.Context, c *HTTPClient) (any, error) {
				return nil, c.UpdateDeployments(ctx, []byte(`{"applications":[]}`))
			},
			wantSeen: []seenRequest{{Method: "PUT", Path: "/api/serve/applications/", Auth: "Bearer tok",
				ContentType: "application/json", Body: `{"applications":[]}`}},
		},
		"update deployments refused": {
			answers: map[string]answer{"PUT /api/serve/applications/": {400, "bad config"}},
			call: func(ctx context.Context, c *HTTPClient) (any, error) {
				return nil, c.UpdateDeployments(ctx, []byte(`{}`))
			},
			errText: "PUT /api/serve/applications/: 400 Bad Request: bad config",
			wantSeen: []seenRequest{{Method: "PUT", Path: "/api/serve/applications/", Auth: "Bearer tok",
				ContentType: "application/json", Body: `{}`}},
		},
		"serve details ask for declarative applications": {
			answers: map[string]answer{"GET /api/serve/applications/": {200, serveDetailsJSON}},
			call:    func(ctx context.Context, c *HTTPClient) (any, error) { return c.GetServeDetails(ctx) },
			want: &ServeDetails{DeployMode: "MULTI_APP", Applications: map[string]ServeApplicationDetails{
				"app1": {
					ServeApplicationStatus: ServeApplicationStatus{Name: "app1", Status: "RUNNING"},
					RoutePrefix:            "/",
					Deployments: map[string]ServeDeploymentDetails{
						"d1": {ServeDeploymentStatus: ServeDeploymentStatus{Name: "d1", Status: "HEALTHY", Message: "ok"}},
					},
				},
			}},
			wantSeen: []seenRequest{{Method: "GET", Path: "/api/serve/applications/", Query: "api_type=declarative", Auth: "Bearer tok"}},
		},
		"multi-application status": {
			answers: map[string]answer{"GET /api/serve/applications/": {200, serveDetailsJSON}},
			call:    func(ctx context.Context, c *HTTPClient) (any, error) { return c.GetMultiApplicationStatus(ctx) },
			want: map[string]*ServeApplicationStatus{"app1": {Name: "app1", Status: "RUNNING",
				Deployments: map[string]ServeDeploymentStatus{"d1": {Name: "d1", Status: "HEALTHY", Message: "ok"}}}},
			wantSeen: []seenRequest{{Method: "GET", Path: "/api/serve/applications/", Query: "api_type=declarative", Auth: "Bearer tok"}},
		},
		"serve not installed": {
			answers:  map[string]answer{"GET /api/serve/applications/": {501, "Serve dependencies are not installed."}},
			call:     func(ctx context.Context, c *HTTPClient) (any, error) { return c.GetMultiApplicationStatus(ctx) },
			want:     map[string]*ServeApplicationStatus(nil),
			errText:  "501 Not Implemented: Serve dependencies are not installed.",
			wantSeen: []seenRequest{{Method: "GET", Path: "/api/serve/applications/", Query: "api_type=declarative", Auth: "Bearer tok"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			url, seen := dashboardServer(t, tc.answers)
			c, err := NewHTTPClient(url, "tok")
			if err != nil {
				t.Fatal(err)
			}
			got, err := tc.call(t.Context(), c)
			checkErr(t, err, nil, tc.errText)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantSeen, seen()); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
		})
	}
}
