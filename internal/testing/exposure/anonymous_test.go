package exposure

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestAnonymousStatusSendsNoCredentials(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" || r.TLS == nil || len(r.TLS.PeerCertificates) > 0 {
			w.WriteHeader(http.StatusOK)
			return
		}
		w.WriteHeader(http.StatusUnauthorized)
	}))
	defer srv.Close()
	got, err := AnonymousStatus(t.Context(), srv.URL+"/version")
	if err != nil {
		t.Fatal(err)
	}
	if got != http.StatusUnauthorized {
		t.Errorf("AnonymousStatus = %d, want %d", got, http.StatusUnauthorized)
	}
}
