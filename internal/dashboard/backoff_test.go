package dashboard_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

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

// failEachTimeItEnds fails key want times on clk, each failure when the
// previous back-off ends, and checks every wait: the Failure, Wait just
// before and at its end, and After. It returns the last Failure.
func failEachTimeItEnds(t *testing.T, b *dashboard.Backoff, clk *clocktesting.FakeClock, key dashboard.BackoffKey, want []time.Duration) dashboard.Failure {
	t.Helper()
	var f dashboard.Failure
	for i, wait := range want {
		now := clk.Now()
		f = b.Fail(key, now, "R", fmt.Sprint(i))
		wantF := dashboard.Failure{Count: i + 1, Wait: wait, RetryAt: now.Add(wait), Reason: "R", Message: fmt.Sprint(i)}
		if diff := cmp.Diff(wantF, f); diff != "" {
			t.Fatalf("failure %d (-want +got):\n%s", i+1, diff)
		}
		if got := b.After(i + 1); got != wait {
			t.Errorf("After(%d) = %v, want %v", i+1, got, wait)
		}
		if got := b.Wait(key, now); got != wait {
			t.Errorf("failure %d: Wait at once = %v, want %v", i+1, got, wait)
		}
		clk.Step(wait - time.Nanosecond)
		if got := b.Wait(key, clk.Now()); got != time.Nanosecond {
			t.Errorf("failure %d: Wait 1ns before the end = %v", i+1, got)
		}
		clk.Step(time.Nanosecond)
		if got := b.Wait(key, clk.Now()); got != 0 {
			t.Errorf("failure %d: Wait at the end = %v, want 0", i+1, got)
		}
	}
	return f
}

// TestBackoffDelaysOnTheClock: each failure of a run, made when the last
// back-off ends on the controller's clock, waits the next doubled delay up
// to the cap; a cap below the base is the base.
func TestBackoffDelaysOnTheClock(t *testing.T) {
	s, ms := time.Second, time.Millisecond
	cases := map[string]struct {
		base, max time.Duration
		want      []time.Duration
	}{
		"defaults":         {want: []time.Duration{3 * s, 6 * s, 12 * s, 24 * s, 48 * s, 60 * s, 60 * s}},
		"custom":           {base: 100 * ms, max: s, want: []time.Duration{100 * ms, 200 * ms, 400 * ms, 800 * ms, s, s}},
		"base only":        {base: 20 * s, want: []time.Duration{20 * s, 40 * s, 60 * s, 60 * s}},
		"max below base":   {base: 5 * s, max: s, want: []time.Duration{5 * s, 5 * s, 5 * s}},
		"max is the base":  {base: 2 * s, max: 2 * s, want: []time.Duration{2 * s, 2 * s}},
		"odd base doubles": {base: 7 * ms, max: 50 * ms, want: []time.Duration{7 * ms, 14 * ms, 28 * ms, 50 * ms}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
			b := &dashboard.Backoff{Base: tc.base, Max: tc.max}
			key := dashboard.BackoffKey{Object: types.NamespacedName{Namespace: "ns", Name: "a"}, UID: "1", Call: "dashboard"}
			failEachTimeItEnds(t, b, clk, key, tc.want)
		})
	}
}

// TestBackoffRunDoesNotExpire: a failure an hour after the last one (more
// than twice the cap, when flowcontrol's default would restart at the
// base) continues the run; only Forget, Retain and ForgetObject end it, and
// the next failure starts again at the base.
func TestBackoffRunDoesNotExpire(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	obj := types.NamespacedName{Namespace: "ns", Name: "a"}
	key := dashboard.BackoffKey{Object: obj, UID: "1", Call: "serve-api/c"}
	var b dashboard.Backoff
	s := time.Second
	failEachTimeItEnds(t, &b, clk, key, []time.Duration{3 * s, 6 * s})
	clk.Step(time.Hour)
	if f := b.Fail(key, clk.Now(), "", ""); f.Count != 3 || f.Wait != 12*s {
		t.Errorf("failure an hour later: count %d, wait %v; want 3, 12s", f.Count, f.Wait)
	}
	ends := map[string]func(){
		"Forget":       func() { b.Forget(key) },
		"Retain":       func() { b.Retain(obj, func(dashboard.BackoffKey) bool { return false }) },
		"ForgetObject": func() { b.ForgetObject(obj) },
	}
	for name, end := range ends {
		b.Fail(key, clk.Now(), "", "")
		end()
		if w := b.Wait(key, clk.Now()); w != 0 {
			t.Errorf("after %s: wait %v, want 0", name, w)
		}
		if f := b.Fail(key, clk.Now(), "", ""); f.Count != 1 || f.Wait != 3*s {
			t.Errorf("first failure after %s: count %d, wait %v; want 1, 3s", name, f.Count, f.Wait)
		}
	}
}

// TestBackoffKeysDoNotMeet: keys whose fields joined with "/" would be
// equal keep runs of their own.
func TestBackoffKeysDoNotMeet(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	obj := types.NamespacedName{Namespace: "ns", Name: "a"}
	a := dashboard.BackoffKey{Object: obj, UID: "u", Call: "c/d"}
	b := dashboard.BackoffKey{Object: obj, UID: "u/c", Call: "d"}
	var back dashboard.Backoff
	for range 3 {
		back.Fail(a, now, "", "")
	}
	if f := back.Fail(b, now, "", ""); f.Count != 1 || f.Wait != dashboard.DefaultRetryBase {
		t.Errorf("other key: count %d, wait %v; want 1, %v", f.Count, f.Wait, dashboard.DefaultRetryBase)
	}
}

// TestBackoffConcurrentUse is for the race detector: controllers' workers
// fail, ask and forget requests of several objects at once.
func TestBackoffConcurrentUse(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var b dashboard.Backoff
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			obj := types.NamespacedName{Namespace: "ns", Name: fmt.Sprint(w % 2)}
			key := dashboard.BackoffKey{Object: obj, UID: "1", Call: fmt.Sprint(w)}
			for i := range 200 {
				b.Fail(key, now, "", "")
				b.Wait(key, now.Add(time.Duration(i)*time.Second))
				b.Failing(key)
				b.Retain(obj, func(k dashboard.BackoffKey) bool { return k != key || i%3 != 0 })
				b.Len()
			}
		})
	}
	wg.Wait()
	if n := b.Len(); n > 4 {
		t.Errorf("Len = %d, want at most one request per worker", n)
	}
}
