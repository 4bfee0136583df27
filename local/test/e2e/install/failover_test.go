package install_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ray-operator/ray-operator/internal/operator"
	"github.com/ray-operator/ray-operator/internal/testing/helmchart"
	"github.com/ray-operator/ray-operator/local/internal/e2eutil"
)

// lease returns the operator's leader Lease.
func (s *suite) lease(ctx context.Context) (*coordinationv1.Lease, error) {
	l := &coordinationv1.Lease{}
	err := s.Client.Get(ctx, client.ObjectKey{Namespace: helmchart.ReleaseNamespace, Name: operator.LeaderElectionID}, l)
	return l, err
}

// holderPod is the Pod a Lease's holder identity names
// (controller-runtime's "<hostname>_<uuid>", the hostname being the Pod's
// name), "" when none holds it.
func holderPod(l *coordinationv1.Lease) string {
	name, _, _ := strings.Cut(ptr.Deref(l.Spec.HolderIdentity, ""), "_")
	return name
}

func testFailover(t *testing.T, r *run) {
	r.startLoop(t)
	r.setValue("replicas", "2")
	shared.helmApply(t, "upgrade", r.release)
	pods := shared.operatorPods(t, 2)
	old, err := shared.lease(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	leader := holderPod(old)
	var doomed corev1.Pod
	for _, p := range pods {
		if p.Name == leader {
			doomed = p
		}
	}
	if doomed.Name == "" {
		t.Fatalf("the Lease's holder %q is none of the operator Pods", ptr.Deref(old.Spec.HolderIdentity, ""))
	}
	mark := len(r.loop.Replies())
	probe := startAdmissionProbe(shared.Client, r.serviceNS)
	deleted := time.Now()
	if err := shared.Client.Delete(t.Context(), &doomed); err != nil {
		t.Fatal(err)
	}
	now := shared.waitNewLeader(t, leader)
	failover := time.Since(deleted)
	t.Logf("leader %s deleted; %s leads %v later (Lease transitions %d -> %d)", leader, holderPod(now), failover.Round(time.Millisecond),
		ptr.Deref(old.Spec.LeaseTransitions, 0), ptr.Deref(now.Spec.LeaseTransitions, 0))
	// Taken over before the deleted leader's Lease would have expired: it
	// released the Lease on its way out.
	expiry := old.Spec.RenewTime.Add(time.Duration(ptr.Deref(old.Spec.LeaseDurationSeconds, 0)) * time.Second)
	if acquired := now.Spec.AcquireTime.Time; !acquired.Before(expiry) {
		t.Errorf("the new leader acquired the Lease at %v, after the old one's expired (%v)", acquired, expiry)
	}
	// The webhooks are every replica's: the one left serves them.
	requireInvalidRefused(t)
	shared.operatorPods(t, 2) // the Deployment's replacement
	requireAdmitted(t, "from the leader's deletion until two operator Pods run again", probe)
	requireNoFailedRequests(t, r, "from the leader's deletion until two operator Pods run again", mark)
}

// waitNewLeader waits until a Pod other than leader holds the Lease, and
// returns it.
func (s *suite) waitNewLeader(t *testing.T, leader string) *coordinationv1.Lease {
	t.Helper()
	return s.waitLease(t, "no other operator Pod took the Lease over from "+leader, func(l *coordinationv1.Lease) bool {
		holder := holderPod(l)
		return holder != "" && holder != leader
	})
}

// waitLease polls the Lease (a missing one is waited for) for up to two
// minutes until done accepts it, and returns it; t fails with failure and
// the last holder otherwise.
func (s *suite) waitLease(t *testing.T, failure string, done func(*coordinationv1.Lease) bool) *coordinationv1.Lease {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	var l *coordinationv1.Lease
	err := e2eutil.Poll(ctx, 50*time.Millisecond, func() (bool, error) {
		var err error
		if l, err = s.lease(ctx); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		return done(l), fmt.Errorf("held by %q", ptr.Deref(l.Spec.HolderIdentity, ""))
	})
	if err != nil {
		t.Fatalf("%s: %v", failure, err)
	}
	return l
}
