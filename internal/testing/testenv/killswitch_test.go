package testenv

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"k8s.io/client-go/rest"
)

// TestKillSwitch: a request in flight when the switch is pulled fails, the
// connection is closed, and nothing dials again.
func TestKillSwitch(t *testing.T) {
	arrived := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/block" {
			close(arrived)
			<-r.Context().Done()
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()

	k := NewKillSwitch()
	httpClient, err := rest.HTTPClientFor(k.Config(&rest.Config{Host: srv.URL}))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := httpClient.Get(srv.URL + "/ok")
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if k.Open() != 1 || k.Killed() {
		t.Fatalf("before the kill: %d open connections, killed %v; want 1, false", k.Open(), k.Killed())
	}

	inFlight := make(chan error, 1)
	go func() {
		resp, err := httpClient.Get(srv.URL + "/block")
		if err == nil {
			_ = resp.Body.Close()
		}
		inFlight <- err
	}()
	<-arrived
	k.Kill()
	if err := <-inFlight; err == nil {
		t.Error("the request in flight succeeded after the kill")
	}
	if k.Open() != 0 || !k.Killed() {
		t.Errorf("after the kill: %d open connections, killed %v; want 0, true", k.Open(), k.Killed())
	}
	resp, err = httpClient.Get(srv.URL + "/ok")
	if err == nil {
		_ = resp.Body.Close()
	}
	if !errors.Is(err, ErrKilled) {
		t.Errorf("a request after the kill: %v, want ErrKilled", err)
	}
}
