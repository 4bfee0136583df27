package main

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// withBasicAuth answers 401 with a Basic challenge to a request without
// user:password, as a registry behind `docker login` does.
func withBasicAuth(user, password string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != user || p != password {
			w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// dockerConfig points the default keychain at a config.json with the
// credentials `docker login host` would store (none when user is empty).
func dockerConfig(t *testing.T, host, user, password string) {
	dir := t.TempDir()
	auths := "{}"
	if user != "" {
		auth := base64.StdEncoding.EncodeToString([]byte(user + ":" + password))
		auths = fmt.Sprintf(`{%q: {"auth": %q}}`, host, auth)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(`{"auths": `+auths+`}`), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("DOCKER_CONFIG", dir)
}

// TestPush pushes an index from an OCI layout to an in-process registry
// that wants the credentials of `docker login`, then pulls it by tag and
// by digest.
func TestPush(t *testing.T) {
	srv := httptest.NewServer(withBasicAuth("robot", "s3cret", registry.New(registry.Logger(log.New(io.Discard, "", 0)))))
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "http://")
	idx, err := random.Index(1024, 2, 2)
	if err != nil {
		t.Fatal(err)
	}
	layoutDir := filepath.Join(t.TempDir(), "oci")
	tag := host + "/ray-operator:v9.8.7"
	ref, err := name.ParseReference(tag)
	if err != nil {
		t.Fatal(err)
	}
	if err := writeLayout(layoutDir, idx, ref); err != nil {
		t.Fatal(err)
	}

	dockerConfig(t, host, "", "")
	if err := run(t.Context(), []string{"push", "-layout", layoutDir, tag}, &bytes.Buffer{}); err == nil {
		t.Fatal("push without credentials succeeded, want the registry's 401")
	}

	dockerConfig(t, host, "robot", "s3cret")
	var out bytes.Buffer
	if err := run(t.Context(), []string{"push", "-layout", layoutDir, tag}, &out); err != nil {
		t.Fatal(err)
	}
	want := digestOf(t, idx)
	if got := strings.TrimSpace(out.String()); got != host+"/ray-operator@"+want.String() {
		t.Errorf("push printed %q, want %s/ray-operator@%s", got, host, want)
	}
	for _, s := range []string{tag, host + "/ray-operator@" + want.String()} {
		ref, err := name.ParseReference(s)
		if err != nil {
			t.Fatal(err)
		}
		pulled, err := remote.Index(ref, remote.WithContext(t.Context()), remote.WithAuthFromKeychain(authn.DefaultKeychain))
		if err != nil {
			t.Fatalf("pull %s: %v", ref, err)
		}
		if got := digestOf(t, pulled); got != want {
			t.Errorf("pull %s: digest %s, want %s", ref, got, want)
		}
	}
}

// TestInsecure checks that -insecure, and only it, reaches a registry of
// a public name over plain HTTP.
func TestInsecure(t *testing.T) {
	for _, insecure := range []bool{false, true} {
		ref, err := parseRef("registry.example.com/ray-operator:v1", insecure)
		if err != nil {
			t.Fatal(err)
		}
		want := map[bool]string{false: "https", true: "http"}[insecure]
		if got := ref.Context().Scheme(); got != want {
			t.Errorf("insecure=%v: scheme %s, want %s", insecure, got, want)
		}
	}
}
