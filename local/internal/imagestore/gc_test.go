package imagestore

import (
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// countBlobs counts GETs of each blob.
type countBlobs struct {
	mu     sync.Mutex
	counts map[string]int
}

func (c *countBlobs) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, d, ok := strings.Cut(r.URL.Path, "/blobs/"); ok && r.Method == http.MethodGet {
			c.mu.Lock()
			c.counts[d]++
			c.mu.Unlock()
		}
		next.ServeHTTP(w, r)
	})
}

func TestConcurrentPullsUnpackOnce(t *testing.T) {
	counter := &countBlobs{counts: map[string]int{}}
	host := serve(t, counter.wrap)
	img := image(t, v1.Config{}, layer(t, file("a", strings.Repeat("a", 1<<20))), layer(t, file("b", "b")))
	digest := push(t, host+"/app:v1", img)
	s := openStore(t, Options{Platform: amd64})

	const pulls = 8
	var wg sync.WaitGroup
	results := make([]Image, pulls)
	errs := make([]error, pulls)
	for i := range pulls {
		wg.Go(func() { results[i], errs[i] = s.Pull(t.Context(), host+"/app:v1", nil) })
	}
	wg.Wait()
	for i := range pulls {
		if errs[i] != nil || results[i].Digest != digest || results[i].RootFS != results[0].RootFS {
			t.Errorf("pull %d = %v, %v; want %s at one root", i, results[i].Digest, errs[i], digest)
		}
	}
	layers, _ := img.Layers()
	for i, l := range layers {
		d, _ := l.Digest()
		if n := counter.counts[d.String()]; n != 1 {
			t.Errorf("layer %d fetched %d times; want once", i+1, n)
		}
	}
}

func TestGC(t *testing.T) {
	host := serve(t, nil)
	clk := &clock{now: time.Unix(1800000000, 0)}
	s := openStore(t, Options{Platform: amd64, Now: clk.Now})
	// Three images of about 8 KiB each, pulled a minute apart: old, mid, new.
	pulled := map[string]Image{}
	for _, tag := range []string{"old", "mid", "new"} {
		ref := host + "/app:" + tag
		push(t, ref, image(t, v1.Config{}, layer(t, file(tag, strings.Repeat(tag, 2730)))))
		img, err := s.Pull(t.Context(), ref, nil)
		if err != nil {
			t.Fatal(err)
		}
		pulled[tag] = img
		clk.now = clk.now.Add(time.Minute)
	}
	var total int64
	for _, img := range pulled {
		total += img.Size
	}
	remaining := func() []string {
		var tags []string
		for _, tag := range []string{"old", "mid", "new"} {
			if _, ok, err := s.Present(host + "/app:" + tag); err != nil {
				t.Fatal(err)
			} else if ok {
				tags = append(tags, tag)
			}
		}
		return tags
	}
	removedTags := func(imgs []Image) []string {
		var tags []string
		for _, img := range imgs {
			tags = append(tags, img.Ref[strings.LastIndex(img.Ref, ":")+1:])
		}
		return tags
	}

	// Below the threshold nothing goes.
	removed, err := s.GC(nil, GCPolicy{HighBytes: total, LowBytes: 0})
	if err != nil || len(removed) != 0 {
		t.Fatalf("GC below the threshold removed %v, %v; want nothing", removed, err)
	}
	// Above it, the least recently used unused image goes first, until the
	// store is at LowBytes: "old" is in use, so "mid" goes, which is enough.
	inUse := map[v1.Hash]bool{pulled["old"].Digest: true}
	removed, err = s.GC(inUse, GCPolicy{HighBytes: total - 1, LowBytes: total - pulled["mid"].Size})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"mid"}, removedTags(removed)); diff != "" {
		t.Errorf("removed (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"old", "new"}, remaining()); diff != "" {
		t.Errorf("remaining (-want +got):\n%s", diff)
	}
	// On request (the zero policy) every unused image goes, except those
	// used within MinAge: Present above used "old" and "new" just now.
	removed, err = s.GC(inUse, GCPolicy{MinAge: time.Second})
	if err != nil || len(removed) != 0 {
		t.Errorf("GC removed %v, %v; want nothing used within MinAge", removedTags(removed), err)
	}
	clk.now = clk.now.Add(time.Minute)
	removed, err = s.GC(inUse, GCPolicy{MinAge: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"new"}, removedTags(removed)); diff != "" {
		t.Errorf("removed on request (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"old"}, remaining()); diff != "" {
		t.Errorf("remaining (-want +got):\n%s", diff)
	}
	// A removed image is pulled again.
	if _, err := s.Pull(t.Context(), host+"/app:mid", nil); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"old", "mid"}, remaining()); diff != "" {
		t.Errorf("after a new pull (-want +got):\n%s", diff)
	}
}
