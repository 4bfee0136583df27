package dashboardtest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"

	"github.com/ray-operator/ray-operator/internal/dashboard"
)

// ServeServer puts a ServeFleet behind a real HTTP server speaking Ray's
// Serve REST API, so that a controller reaches it through the real
// dashboard.HTTPClient, and a test can make the server misbehave for some
// clusters with the faults of FaultError. Close it when done.
type ServeServer struct {
	fleet   *ServeFleet
	srv     *httptest.Server
	timeout time.Duration
	refused string

	mu     sync.Mutex
	faults map[string]Fault
}

// clustersPath prefixes the path of each cluster's dashboard on the server.
const clustersPath = "/clusters/"

// NewServeServer starts a server for fleet whose clients give up after
// timeout.
func NewServeServer(fleet *ServeFleet, timeout time.Duration) (*ServeServer, error) {
	refused, _, err := faultServer(FaultRefused)
	if err != nil {
		return nil, err
	}
	s := &ServeServer{fleet: fleet, timeout: timeout, refused: refused, faults: map[string]Fault{}}
	s.srv = httptest.NewServer(s)
	return s, nil
}

// Close stops the server.
func (s *ServeServer) Close() { s.srv.Close() }

// Provider hands out real HTTP clients of the server, one path per
// cluster URL; a cluster with FaultRefused gets a port nothing listens on.
func (s *ServeServer) Provider() dashboard.ClientProvider {
	return func(baseURL, authToken string) (dashboard.Client, error) {
		target := s.srv.URL + clustersPath + baseURL
		if s.faultFor(baseURL) == FaultRefused {
			target = s.refused
		}
		return dashboard.NewHTTPClient(target, authToken, dashboard.WithHTTPClient(&http.Client{Timeout: s.timeout}))
	}
}

// SetFault makes the server misbehave as fault says for every request to
// the clusters whose URL starts with prefix; "" clears it.
func (s *ServeServer) SetFault(prefix string, fault Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if fault == "" {
		delete(s.faults, prefix)
		return
	}
	s.faults[prefix] = fault
}

func (s *ServeServer) faultFor(clusterURL string) Fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	for prefix, fault := range s.faults {
		if strings.HasPrefix(clusterURL, prefix) {
			return fault
		}
	}
	return ""
}

// ServeHTTP answers GET and PUT /api/serve/applications/ of the cluster
// the path names from the fleet, unless a fault is set for it.
func (s *ServeServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	cluster, path, ok := strings.Cut(strings.TrimPrefix(r.URL.Path, clustersPath), "/")
	if fault := s.faultFor(cluster); fault != "" {
		faultHandler(fault)(w, r)
		return
	}
	if !ok || "/"+path != "/api/serve/applications/" {
		http.NotFound(w, r)
		return
	}
	switch r.Method {
	case http.MethodGet:
		details, err := s.fleet.details(cluster)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(details)
	case http.MethodPut:
		body, err := io.ReadAll(r.Body)
		if err == nil {
			err = s.fleet.put(cluster, body)
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
		}
	default:
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	}
}
