package imagestore

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// requireAuth lets only user:pass through.
func requireAuth(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != "user" || p != "pass" {
			w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = io.WriteString(w, `{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}`)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// corruptBlob flips a byte of the blob named digest as the registry sends it.
func corruptBlob(digest string) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodGet || !strings.HasSuffix(r.URL.Path, "/blobs/"+digest) {
				next.ServeHTTP(w, r)
				return
			}
			rec := httptest.NewRecorder()
			next.ServeHTTP(rec, r)
			body := rec.Body.Bytes()
			body[len(body)/2] ^= 0xff
			for k, v := range rec.Header() {
				w.Header()[k] = v
			}
			w.WriteHeader(rec.Code)
			_, _ = w.Write(body)
		})
	}
}

// serveManifestFor answers requests for the manifest want with the bytes of
// other: a registry whose content does not match its digest.
func serveManifestFor(want v1.Hash, other []byte) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !strings.HasSuffix(r.URL.Path, "/manifests/"+want.String()) {
				next.ServeHTTP(w, r)
				return
			}
			w.Header().Set("Content-Type", "application/vnd.docker.distribution.manifest.v2+json")
			w.Header().Set("Docker-Content-Digest", want.String())
			_, _ = w.Write(other)
		})
	}
}

func closedAddress(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

func TestPullBadInputs(t *testing.T) {
	good := image(t, v1.Config{Cmd: []string{"/app"}}, layer(t, file("app", "app")), layer(t, file("data", strings.Repeat("d", 4096))))
	goodDigest, _ := good.Digest()
	goodLayers, _ := good.Layers()
	topLayer, _ := goodLayers[1].Digest()
	other := image(t, v1.Config{Cmd: []string{"/other"}}, layer(t, file("other", "other")))
	otherManifest, _ := other.RawManifest()
	// An image whose config names a diff ID its layer does not have.
	cf, _ := good.ConfigFile()
	cf = cf.DeepCopy()
	cf.RootFS.DiffIDs[1] = v1.Hash{Algorithm: "sha256", Hex: strings.Repeat("0", 64)}
	wrongDiffID, err := mutate.ConfigFile(good, cf)
	if err != nil {
		t.Fatal(err)
	}

	tests := map[string]struct {
		wrap      func(http.Handler) http.Handler
		push      v1.Image
		ref       func(host string) string
		keychain  authn.Keychain
		wantCause Cause
		wantText  string
	}{
		"missing tag": {
			ref: func(h string) string { return h + "/app:nope" }, wantCause: CauseNotFound, wantText: "MANIFEST_UNKNOWN",
		},
		"missing repository": {
			ref: func(h string) string { return h + "/nothing:v1" }, wantCause: CauseNotFound, wantText: "nothing",
		},
		"wrong digest": {
			ref:       func(h string) string { return h + "/app@sha256:" + strings.Repeat("ab", 32) },
			wantCause: CauseNotFound, wantText: "sha256:abab",
		},
		"registry sends another manifest for the digest": {
			wrap:      serveManifestFor(goodDigest, otherManifest),
			ref:       func(h string) string { return h + "/app@" + goodDigest.String() },
			wantCause: CauseDigestMismatch, wantText: "does not match requested digest",
		},
		"unreachable registry": {
			ref: func(string) string { return closedAddress(t) + "/app:v1" }, wantCause: CauseUnreachable, wantText: "connection refused",
		},
		"unauthorised, anonymous": {
			wrap: requireAuth, ref: func(h string) string { return h + "/app:v1" }, wantCause: CauseUnauthorized, wantText: "UNAUTHORIZED",
		},
		"unauthorised, wrong password": {
			wrap: requireAuth, ref: func(h string) string { return h + "/app:v1" },
			keychain:  dockerConfig(t, `{"auths":{"HOST":{"username":"user","password":"wrong"}}}`),
			wantCause: CauseUnauthorized, wantText: "UNAUTHORIZED",
		},
		"corrupt layer": {
			wrap: corruptBlob(topLayer.String()), ref: func(h string) string { return h + "/app:v1" },
			wantCause: CauseCorruptLayer, wantText: "layer 2 (" + topLayer.String() + ")",
		},
		"layer is not the config's diff ID": {
			push: wrongDiffID, ref: func(h string) string { return h + "/app:v1" },
			wantCause: CauseDigestMismatch, wantText: "the image config says sha256:0000",
		},
		"invalid reference": {
			ref: func(string) string { return "UPPER/Case:v1" }, wantCause: CauseInvalidReference, wantText: "UPPER/Case",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			host := serve(t, tc.wrap)
			img := good
			if tc.push != nil {
				img = tc.push
			}
			push(t, host+"/app:v1", img, remote.WithAuth(&authn.Basic{Username: "user", Password: "pass"}))
			keychain := tc.keychain
			if k, ok := keychain.(DockerConfigKeychain); ok {
				keychain = k.withHost(host)
			}
			s := openStore(t, Options{Platform: amd64})
			ref := tc.ref(host)
			_, err := s.Pull(t.Context(), ref, keychain)
			pe, ok := err.(*PullError)
			if !ok {
				t.Fatalf("Pull(%s) = %v; want a *PullError", ref, err)
			}
			if pe.Cause != tc.wantCause || pe.Ref != ref || !strings.Contains(pe.Error(), tc.wantText) {
				t.Errorf("Pull(%s) = %q (cause %q); want cause %q, the reference and %q", ref, pe, pe.Cause, tc.wantCause, tc.wantText)
			}
			assertNothingUnpacked(t, s)
		})
	}
}

// assertNothingUnpacked checks that a failed pull left no image and no
// half-unpacked directory.
func assertNothingUnpacked(t *testing.T, s *Store) {
	t.Helper()
	for _, d := range []string{"images", "tmp"} {
		entries, err := os.ReadDir(filepath.Join(s.dir, d))
		if err != nil || len(entries) != 0 {
			t.Errorf("%s/ holds %v (%v) after a failed pull; want nothing", d, entries, err)
		}
	}
}

func TestPullWithImagePullSecret(t *testing.T) {
	host := serve(t, requireAuth)
	img := image(t, v1.Config{Cmd: []string{"/app"}}, layer(t, file("app", "private")))
	digest := push(t, host+"/team/app:v1", img, remote.WithAuth(&authn.Basic{Username: "user", Password: "pass"}))
	s := openStore(t, Options{Platform: amd64})
	// The first secret has nothing for the host, the second a wrong
	// password for another repository, the third the credentials.
	keychain := dockerConfig(t,
		`{"auths":{"other.example":{"auth":"dXNlcjpwYXNz"}}}`,
		`{"auths":{"HOST/elsewhere":{"username":"user","password":"wrong"}}}`,
		`{"HOST/team":{"auth":"dXNlcjpwYXNz"}}`).withHost(host)
	got, err := s.Pull(t.Context(), host+"/team/app:v1", keychain)
	if err != nil {
		t.Fatal(err)
	}
	if got.Digest != digest {
		t.Errorf("digest %s, want %s", got.Digest, digest)
	}
}

func dockerConfig(t *testing.T, configs ...string) DockerConfigKeychain {
	t.Helper()
	raw := make([][]byte, len(configs))
	for i, c := range configs {
		raw[i] = []byte(c)
	}
	k, err := ParseDockerConfigs(raw...)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// withHost puts the test registry's address where a config says HOST.
func (k DockerConfigKeychain) withHost(host string) DockerConfigKeychain {
	entries := make([]credential, len(k.entries))
	for i, c := range k.entries {
		if c.host == "HOST" {
			c.host = host
		}
		entries[i] = c
	}
	return DockerConfigKeychain{entries: entries}
}
