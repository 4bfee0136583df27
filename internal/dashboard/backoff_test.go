package dashboard_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ray-operator/ray-operator/internal/dashboard"
)

// TestBackoffDoublesToItsCap: 3 s doubling to 60 s by default, the given
// base and cap otherwise.
func TestBackoffDoublesToItsCap(t *testing.T) {
	var def dashboard.Backoff
	custom := dashboard.Backoff{Base: 100 * time.Millisecond, Max: time.Second}
	var gotDef, gotCustom []time.Duration
	for n := 1; n <= 7; n++ {
		gotDef = append(gotDef, def.After(n))
		gotCustom = append(gotCustom, custom.After(n))
	}
	s, ms := time.Second, time.Millisecond
	if diff := cmp.Diff([]time.Duration{3 * s, 6 * s, 12 * s, 24 * s, 48 * s, 60 * s, 60 * s}, gotDef); diff != "" {
		t.Errorf("default (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]time.Duration{100 * ms, 200 * ms, 400 * ms, 800 * ms, s, s, s}, gotCustom); diff != "" {
		t.Errorf("custom (-want +got):\n%s", diff)
	}
}

// TestBackoffRunOfFailures: a failure makes the request wait, a further
// one doubles the wait and keeps the last reason and message; Forget ends
// the run; a re-created object (another UID) starts with none; Retain and
// ForgetObject drop an object's requests and only its.
func TestBackoffRunOfFailures(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	obj := types.NamespacedName{Namespace: "ns", Name: "a"}
	key := dashboard.BackoffKey{Object: obj, UID: "1", Call: "serve-api/c"}
	other := dashboard.BackoffKey{Object: obj, UID: "1", Call: "serve-proxy/c"}
	elsewhere := dashboard.BackoffKey{Object: types.NamespacedName{Namespace: "ns", Name: "b"}, UID: "2", Call: "serve-api/c"}
	var b dashboard.Backoff
	if w := b.Wait(key, t0); w != 0 {
		t.Fatalf("wait before any failure %v", w)
	}
	b.Fail(key, t0, "R1", "first")
	f := b.Fail(key, t0.Add(3*time.Second), "R2", "second")
	want := dashboard.Failure{Count: 2, Wait: 6 * time.Second, RetryAt: t0.Add(9 * time.Second), Reason: "R2", Message: "second"}
	if diff := cmp.Diff(want, f); diff != "" {
		t.Errorf("failure (-want +got):\n%s", diff)
	}
	if w := b.Wait(key, t0.Add(5*time.Second)); w != 4*time.Second {
		t.Errorf("wait 5 s in: %v, want 4s", w)
	}
	if w := b.Wait(key, t0.Add(9*time.Second)); w != 0 {
		t.Errorf("wait at the end of the back-off: %v", w)
	}
	if _, failing := b.Failing(dashboard.BackoffKey{Object: obj, UID: "3", Call: key.Call}); failing {
		t.Error("a re-created object inherits the failures")
	}
	b.Forget(key)
	if _, failing := b.Failing(key); failing {
		t.Error("still failing after Forget")
	}
	for _, k := range []dashboard.BackoffKey{key, other, elsewhere} {
		b.Fail(k, t0, "", "")
	}
	b.Retain(obj, func(k dashboard.BackoffKey) bool { return k == other })
	if _, failing := b.Failing(key); failing || b.Len() != 2 {
		t.Errorf("after Retain: %d requests, %v failing", b.Len(), key)
	}
	b.ForgetObject(obj)
	if _, failing := b.Failing(elsewhere); !failing || b.Len() != 1 {
		t.Errorf("after ForgetObject: %d requests, want only the other object's", b.Len())
	}
}
