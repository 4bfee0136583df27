// Package expectations remembers the Pods a controller has just created or
// deleted until its informer cache shows the change. A reconcile that runs
// before the cache caught up would otherwise count too few (or too many)
// Pods and create (or delete) them a second time. Until a group's
// expectations are met, the controller leaves that group alone; the Pod
// event that meets them triggers the next reconcile.
package expectations

import (
	"context"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// HeadGroup is the group name under which head Pods are expected.
const HeadGroup = ""

// DefaultTimeout is how long an expectation is trusted to the cache. It
// covers a Pod created and deleted again by someone else before the cache
// saw it, and a deleted Pod that stays Terminating, which would otherwise
// block its group forever (KubeRay: 30 s, after which it counts the
// expectation met whatever the cache shows). With a live reader (the API
// server) an expectation past it is met unless the API server shows the
// cache to be behind: a created Pod the API server has and the cache does
// not, a deleted Pod the cache still has and the API server does not. A
// cache that far behind is not rare under load: a 3,000-RayJob benchmark on
// two cores once had its RayCluster passes 30 s behind their Pods' creates,
// and a pass that took the timeout for met created a second head and set of
// workers for the cluster.
const DefaultTimeout = 30 * time.Second

// MaxCacheLag is how long an expectation is waited for at most, however far
// behind the cache is; past it the group is no longer blocked.
const MaxCacheLag = 10 * time.Minute

// Action is what the controller did to a Pod.
type Action string

// Actions.
const (
	Create Action = "create"
	Delete Action = "delete"
)

// group identifies one group of one RayCluster.
type group struct {
	namespace, cluster, name string
}

// expectation is one Pod the controller waits to see created or gone.
type expectation struct {
	action   Action
	recorded time.Time
}

// Scale tracks the expected Pod creations and deletions of every RayCluster
// group. It is safe for concurrent use.
type Scale struct {
	reader client.Reader
	live   client.Reader
	clock  clock.PassiveClock

	mu      sync.Mutex
	pending map[group]map[string]expectation
}

// New returns a tracker that checks Pods through reader (the manager's
// cache) and ages expectations with clk.
func New(reader client.Reader, clk clock.PassiveClock) *Scale {
	return &Scale{
		reader:  reader,
		clock:   clk,
		pending: map[group]map[string]expectation{},
	}
}

// WithLiveReader makes the tracker ask live (the API server, uncached)
// about a created Pod the cache does not show yet: if the API server has no
// such Pod either, it was deleted before the cache saw it, and waiting for
// it would only block its group until the timeout.
func (s *Scale) WithLiveReader(live client.Reader) *Scale {
	s.live = live
	return s
}

// Expect records that the Pod podName of a cluster group was just created
// or deleted.
func (s *Scale) Expect(namespace, cluster, groupName, podName string, action Action) {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := group{namespace, cluster, groupName}
	if s.pending[key] == nil {
		s.pending[key] = map[string]expectation{}
	}
	s.pending[key][podName] = expectation{action: action, recorded: s.clock.Now()}
}

// Check is the outcome of one group's expectations: Met when the cache
// shows every change expected; Err when a read failed (then not Met);
// CreatesUnseen when a Pod created in the group exists but the cache does
// not show it yet (then not Met).
type Check struct {
	Met           bool
	Err           error
	CreatesUnseen bool
}

// pendingPod is one expectation being checked.
type pendingPod struct {
	group int // index into the groups checked
	name  string
	e     expectation
	met   bool
	err   error
}

// SatisfiedGroups reports, for each of groups of one cluster, whether the
// cache shows every change expected for it, forgetting the expectations
// that are met; a read error counts as not met and is returned. The cache
// is read first; the created Pods it does not show yet (and the deleted
// Pods it still shows past the timeout) are then asked about live all at
// once, so that a pass running just after its creates waits for one round
// trip to the API server, not one per Pod.
func (s *Scale) SatisfiedGroups(ctx context.Context, namespace, cluster string, groups []string) []Check {
	pods := s.pendingOf(namespace, cluster, groups)
	var unseen []*pendingPod
	for _, p := range pods {
		var askLive bool
		p.met, askLive, p.err = s.inCache(ctx, namespace, p.name, p.e)
		if askLive {
			unseen = append(unseen, p)
		}
	}
	s.askLive(ctx, namespace, unseen)
	checks := make([]Check, len(groups))
	for i := range checks {
		checks[i].Met = true
	}
	for _, p := range pods {
		c := &checks[p.group]
		switch {
		case p.err != nil:
			c.Met = false
			if c.Err == nil {
				c.Err = p.err
			}
		case !p.met:
			c.Met = false
			c.CreatesUnseen = c.CreatesUnseen || p.e.action == Create
		default:
			s.forget(group{namespace, cluster, groups[p.group]}, p.name, p.e)
		}
	}
	return checks
}

// pendingOf copies the expectations of groups.
func (s *Scale) pendingOf(namespace, cluster string, groups []string) []*pendingPod {
	s.mu.Lock()
	defer s.mu.Unlock()
	var pods []*pendingPod
	for i, g := range groups {
		for name, e := range s.pending[group{namespace, cluster, g}] {
			pods = append(pods, &pendingPod{group: i, name: name, e: e})
		}
	}
	return pods
}

// inCache checks one expectation against the cache. askLive says only the
// API server can tell: a created Pod the cache does not show may not have
// reached it yet, or have been deleted before it saw it; a deleted Pod the
// cache still shows past the timeout may be Terminating, or gone with the
// cache behind.
func (s *Scale) inCache(ctx context.Context, namespace, name string, e expectation) (met, askLive bool, err error) {
	age := s.clock.Since(e.recorded)
	if age >= MaxCacheLag || (age >= DefaultTimeout && s.live == nil) {
		return true, false, nil
	}
	key := types.NamespacedName{Namespace: namespace, Name: name}
	err = s.reader.Get(ctx, key, &corev1.Pod{}, client.UnsafeDisableDeepCopy)
	switch {
	case err == nil && e.action == Create:
		return true, false, nil
	case err == nil:
		return false, age >= DefaultTimeout, nil
	case !apierrors.IsNotFound(err):
		return false, false, err
	case e.action == Delete:
		return true, false, nil
	}
	return false, s.live != nil, nil
}

// askLive reads each of pods from the API server, concurrently. A created
// Pod that is not there was deleted before the cache saw it: met. A deleted
// Pod (asked past the timeout) that is still there is Terminating: met; one
// that is not there is gone and the cache is behind: not met.
func (s *Scale) askLive(ctx context.Context, namespace string, pods []*pendingPod) {
	ask := func(p *pendingPod) {
		err := s.live.Get(ctx, types.NamespacedName{Namespace: namespace, Name: p.name}, &corev1.Pod{})
		switch {
		case apierrors.IsNotFound(err):
			p.met = p.e.action == Create
		case err != nil:
			p.err = err
		default:
			p.met = p.e.action == Delete
		}
	}
	if len(pods) == 1 {
		ask(pods[0])
		return
	}
	var wg sync.WaitGroup
	for _, p := range pods {
		wg.Go(func() { ask(p) })
	}
	wg.Wait()
}

// forget drops one met expectation unless a newer one replaced it meanwhile.
func (s *Scale) forget(key group, name string, e expectation) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if cur, ok := s.pending[key][name]; ok && cur == e {
		delete(s.pending[key], name)
		if len(s.pending[key]) == 0 {
			delete(s.pending, key)
		}
	}
}

// Forget drops every expectation of a cluster, e.g. once it is deleted.
func (s *Scale) Forget(namespace, cluster string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for key := range s.pending {
		if key.namespace == namespace && key.cluster == cluster {
			delete(s.pending, key)
		}
	}
}
