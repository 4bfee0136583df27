package expectations

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

func pod(name string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}
}

func TestScale(t *testing.T) {
	cases := map[string]struct {
		existing []string
		expect   map[string]Action
		elapsed  time.Duration
		want     bool
	}{
		"nothing expected":             {want: true},
		"created pod not yet in cache": {expect: map[string]Action{"w1": Create}},
		"created pod in cache":         {existing: []string{"w1"}, expect: map[string]Action{"w1": Create}, want: true},
		"deleted pod still in cache":   {existing: []string{"w1"}, expect: map[string]Action{"w1": Delete}},
		"deleted pod gone":             {expect: map[string]Action{"w1": Delete}, want: true},
		"one of two met":               {existing: []string{"w1"}, expect: map[string]Action{"w1": Create, "w2": Create}},
		"timed out (no live reader)":   {expect: map[string]Action{"w1": Create}, elapsed: DefaultTimeout, want: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			builder := fake.NewClientBuilder()
			for _, p := range tc.existing {
				builder = builder.WithObjects(pod(p))
			}
			clk := clocktesting.NewFakeClock(time.Now())
			s := New(builder.Build(), clk)
			for p, action := range tc.expect {
				s.Expect("ns", "rc", "group", p, action)
			}
			s.Expect("ns", "rc", "other-group", "x", Create) // never met, must not matter
			clk.Step(tc.elapsed)
			got, err := satisfiedOne(ctx, s, "ns", "rc", "group")
			if err != nil || got != tc.want {
				t.Fatalf("SatisfiedGroups() = %v, %v; want %v, nil", got, err, tc.want)
			}
		})
	}
}

func TestScaleForgetsMetExpectations(t *testing.T) {
	ctx := context.Background()
	c := fake.NewClientBuilder().WithObjects(pod("w1")).Build()
	s := New(c, clocktesting.NewFakeClock(time.Now()))
	s.Expect("ns", "rc", "g", "w1", Create)
	if ok, _ := satisfiedOne(ctx, s, "ns", "rc", "g"); !ok {
		t.Fatal("expected the creation to be met")
	}
	// Once met, the expectation is forgotten: the pod's later deletion by
	// someone else does not block the group.
	if err := c.Delete(ctx, pod("w1")); err != nil {
		t.Fatal(err)
	}
	if ok, _ := satisfiedOne(ctx, s, "ns", "rc", "g"); !ok {
		t.Fatal("a met expectation must not be checked again")
	}
}

func TestScaleForget(t *testing.T) {
	s := New(fake.NewClientBuilder().Build(), clocktesting.NewFakeClock(time.Now()))
	s.Expect("ns", "rc", "g", "w1", Create)
	s.Expect("ns", "other", "g", "w1", Create)
	s.Forget("ns", "rc")
	if ok, _ := satisfiedOne(context.Background(), s, "ns", "rc", "g"); !ok {
		t.Fatal("Forget must drop the cluster's expectations")
	}
	if ok, _ := satisfiedOne(context.Background(), s, "ns", "other", "g"); ok {
		t.Fatal("Forget must keep other clusters' expectations")
	}
}

func TestScaleLiveReader(t *testing.T) {
	ctx := context.Background()
	cache := fake.NewClientBuilder().Build()                       // never saw the Pod
	live := fake.NewClientBuilder().WithObjects(pod("w1")).Build() // the API server has it
	s := New(cache, clocktesting.NewFakeClock(time.Now())).WithLiveReader(live)
	s.Expect("ns", "rc", "g", "w1", Create)
	s.Expect("ns", "rc", "g", "w2", Create) // created and deleted before the cache saw it
	if ok, err := satisfiedOne(ctx, s, "ns", "rc", "g"); ok || err != nil {
		t.Fatalf("SatisfiedGroups() = %v, %v; want false while w1 exists but is not cached", ok, err)
	}
	if err := live.Delete(ctx, pod("w1")); err != nil {
		t.Fatal(err)
	}
	if ok, err := satisfiedOne(ctx, s, "ns", "rc", "g"); !ok || err != nil {
		t.Fatalf("SatisfiedGroups() = %v, %v; want true once neither Pod exists", ok, err)
	}
}

// TestScaleTimeoutWithLiveReader: past DefaultTimeout an expectation is
// met unless the API server shows the cache to be behind; past MaxCacheLag
// it is met whatever either shows. The two "cache behind" cases were met at
// the timeout before, which let a pass 30 s behind its creates create the
// cluster's Pods a second time.
func TestScaleTimeoutWithLiveReader(t *testing.T) {
	cases := map[string]struct {
		action        Action
		cached, exist bool // the Pod in the cache, on the API server
		elapsed       time.Duration
		want          bool
	}{
		"created, cache behind, at the timeout":      {action: Create, exist: true, elapsed: DefaultTimeout},
		"created, cache behind, at the maximum lag":  {action: Create, exist: true, elapsed: MaxCacheLag, want: true},
		"created, deleted unseen, at the timeout":    {action: Create, elapsed: DefaultTimeout, want: true},
		"created, cached":                            {action: Create, cached: true, exist: true, elapsed: DefaultTimeout, want: true},
		"deleted, cache behind, before the timeout":  {action: Delete, cached: true, elapsed: DefaultTimeout - time.Second},
		"deleted, cache behind, at the timeout":      {action: Delete, cached: true, elapsed: DefaultTimeout},
		"deleted, cache behind, at the maximum lag":  {action: Delete, cached: true, elapsed: MaxCacheLag, want: true},
		"deleted, still Terminating, at the timeout": {action: Delete, cached: true, exist: true, elapsed: DefaultTimeout, want: true},
		"deleted, Terminating, before the timeout":   {action: Delete, cached: true, exist: true, elapsed: DefaultTimeout - time.Second},
		"deleted, gone from both":                    {action: Delete, want: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cache, live := fake.NewClientBuilder(), fake.NewClientBuilder()
			if tc.cached {
				cache = cache.WithObjects(pod("w1"))
			}
			if tc.exist {
				live = live.WithObjects(pod("w1"))
			}
			clk := clocktesting.NewFakeClock(time.Now())
			s := New(cache.Build(), clk).WithLiveReader(live.Build())
			s.Expect("ns", "rc", "g", "w1", tc.action)
			clk.Step(tc.elapsed)
			if got, err := satisfiedOne(context.Background(), s, "ns", "rc", "g"); got != tc.want || err != nil {
				t.Fatalf("SatisfiedGroups() = %v, %v; want %v, nil", got, err, tc.want)
			}
		})
	}
}

// inFlightTogether makes each live Get wait until n Gets are in flight at
// once; a Get left waiting longer than wait fails.
func inFlightTogether(n int, wait time.Duration) interceptor.Funcs {
	var arrived atomic.Int32
	all := make(chan struct{})
	return interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if arrived.Add(1) == int32(n) {
				close(all)
			}
			select {
			case <-all:
			case <-time.After(wait):
				return errors.New("a live read was sent alone")
			}
			return c.Get(ctx, key, obj, opts...)
		},
	}
}

// TestSatisfiedGroupsAsksLiveAtOnce: the created Pods the cache does not
// show, of every group of the cluster, are read live in one round; each
// group gets its own answer, and says whether it waits for Pods it created
// (not for a deletion).
func TestSatisfiedGroupsAsksLiveAtOnce(t *testing.T) {
	ctx := context.Background()
	cache := fake.NewClientBuilder().WithObjects(pod("w3"), pod("w4")).Build()
	live := fake.NewClientBuilder().WithObjects(pod("head"), pod("w1"), pod("w3")).
		WithInterceptorFuncs(inFlightTogether(3, 10*time.Second)).Build()
	s := New(cache, clocktesting.NewFakeClock(time.Now())).WithLiveReader(live)
	s.Expect("ns", "rc", HeadGroup, "head", Create)
	s.Expect("ns", "rc", "a", "w1", Create)
	s.Expect("ns", "rc", "b", "w2", Create) // deleted before the cache saw it
	s.Expect("ns", "rc", "c", "w3", Create) // cached: not asked live
	s.Expect("ns", "rc", "d", "w4", Delete) // still cached: not asked live
	got := s.SatisfiedGroups(ctx, "ns", "rc", []string{HeadGroup, "a", "b", "c", "d"})
	want := []Check{{CreatesUnseen: true}, {CreatesUnseen: true}, {Met: true}, {Met: true}, {}}
	if diff := cmp.Diff(want, got, cmpopts.EquateErrors()); diff != "" {
		t.Fatalf("SatisfiedGroups() (-want +got):\n%s", diff)
	}
}

// satisfiedOne is SatisfiedGroups for one group.
func satisfiedOne(ctx context.Context, s *Scale, namespace, cluster, group string) (bool, error) {
	c := s.SatisfiedGroups(ctx, namespace, cluster, []string{group})[0]
	return c.Met, c.Err
}
