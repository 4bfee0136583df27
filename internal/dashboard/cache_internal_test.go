package dashboard

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	clocktesting "k8s.io/utils/clock/testing"
)

// TestCacheSizes: KubeRay's interval and expiry; polls run on their own
// (256 at most at once) where KubeRay has 8 workers.
func TestCacheSizes(t *testing.T) {
	c := NewJobInfoCache(clocktesting.NewFakeClock(time.Now()))
	got := []any{c.inFlight, c.interval, c.expiry}
	want := []any{256, 3 * time.Second, 10 * time.Minute}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestCacheKeepsAtMostCacheSizeEntries(t *testing.T) {
	c := NewJobInfoCache(clocktesting.NewFakeClock(time.Now()))
	for i := range CacheSize + 1 {
		if _, err := c.get(cacheKey{scope: "s", jobID: fmt.Sprint(i)}, nil); err != ErrAgain {
			t.Fatalf("get %d: %v", i, err)
		}
	}
	if got := c.entries.Len(); got != CacheSize {
		t.Errorf("entries = %d, want %d", got, CacheSize)
	}
	if c.entries.Contains(cacheKey{scope: "s", jobID: "0"}) {
		t.Error("the least recently used entry was kept")
	}
}

func TestCacheScopesJobsByCluster(t *testing.T) {
	c := NewJobInfoCache(clocktesting.NewFakeClock(time.Now()))
	a, b := cacheKey{scope: "http://a:8265", jobID: "j"}, cacheKey{scope: "http://b:8265", jobID: "j"}
	_, _ = c.get(a, nil)
	c.store(pollTask{key: a, gen: 1}, nil, ErrNotFound)
	if _, err := c.get(b, nil); err != ErrAgain {
		t.Errorf("cluster b saw cluster a's answer: %v", err)
	}
}

func TestCacheSweepRemovesOnlyExpiredEntries(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	c := NewJobInfoCache(clk)
	old, fresh := cacheKey{scope: "s", jobID: "old"}, cacheKey{scope: "s", jobID: "fresh"}
	_, _ = c.get(old, nil)
	clk.Step(CacheExpiry)
	_, _ = c.get(fresh, nil)
	clk.Step(time.Second)

	c.removeExpired()
	if diff := cmp.Diff([]cacheKey{fresh}, c.entries.Keys(), cmp.AllowUnexported(cacheKey{})); diff != "" {
		t.Errorf("kept entries (-want +got):\n%s", diff)
	}
}
