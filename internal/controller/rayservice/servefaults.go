package rayservice

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/conditions"
	"github.com/ray-operator/ray-operator/internal/dashboard"
	"github.com/ray-operator/ray-operator/internal/passsteps"
)

// What happens when a request to Ray Serve fails (a 5xx, a timeout, a
// refused connection, an unparsable or slow answer): the pass goes on and
// returns no error; the request is retried after a back-off (3 s doubling
// to 60 s by default) that passes in between respect, so a failing Serve is
// never asked in a loop; each failure is a Warning event; and the
// ServeRequestsFailing condition says what failed and when it is tried
// again, until every request succeeds again. A cluster whose Serve API
// fails is not ready (no traffic is switched to it on an old answer) and
// keeps the application statuses last seen. KubeRay instead returns the
// error (controller-runtime's rate limiter then retries after 5 ms, up to
// 16 minutes), writes no status and, for a failed read, no event.

// The requests that back off, per cluster: the dashboard's Serve API (the
// read of the applications and the PUTs of configs and target capacity
// share one back-off, so that a read that succeeds does not reset a PUT
// that keeps failing), and the Serve proxy health check of a head Pod.
const (
	callServeAPI   = "serve-api"
	callServeProxy = "serve-proxy"
)

// serveKey names a request of rs to Ray Serve: call of cluster (and of its
// head Pod, for the proxy health check).
func serveKey(rs *rayv1.RayService, call string, parts ...string) dashboard.BackoffKey {
	return dashboard.BackoffKey{
		Object: types.NamespacedName{Namespace: rs.Namespace, Name: rs.Name},
		UID:    rs.UID,
		Call:   strings.Join(append([]string{call}, parts...), "/"),
	}
}

// serveCallError is a failed request to Ray Serve. what says what the
// controller was doing; reason names the failure (the event reason and the
// condition reason); noted says that the caller already recorded the
// event (with KubeRay's note).
type serveCallError struct {
	reason rayv1.RayServiceConditionReason
	what   string
	err    error
	noted  bool
}

func (e *serveCallError) Error() string { return e.what + ": " + e.err.Error() }
func (e *serveCallError) Unwrap() error { return e.err }

// mayCall reports whether the request key may be sent in this pass: not
// while its back-off lasts, in which case the pass comes back when it ends.
// Every request a pass makes or holds back is remembered: the condition is
// computed from them.
func (r *Reconciler) mayCall(s *scope, key dashboard.BackoffKey) bool {
	s.serveCalls = append(s.serveCalls, key)
	return r.serveBackoff.Wait(key, s.now) == 0
}

// serveFailed records a failed request: its back-off and a Warning event
// (the caller's if noted). serveRetry then brings a pass back when the
// back-off ends.
func (r *Reconciler) serveFailed(s *scope, key dashboard.BackoffKey, failure *serveCallError) {
	f := r.serveBackoff.Fail(key, s.now, string(failure.reason), failure.Error())
	if !failure.noted {
		r.events.Eventf(s.rs, nil, corev1.EventTypeWarning, string(failure.reason), actionReconcile, "%s", retryText(f))
	}
}

// serveRetry is how soon the first of the requests this pass made or held
// back leaves its back-off: the pass that retries it (0: none is in one).
// It is read from the back-offs rather than remembered while the pass goes,
// so that a request held back and one that has just failed count alike.
func (r *Reconciler) serveRetry(s *scope) time.Duration {
	var wait time.Duration
	for _, key := range s.serveCalls {
		wait = passsteps.Sooner(wait, r.serveBackoff.Wait(key, s.now))
	}
	return wait
}

// serveSucceeded ends the run of failures of a request.
func (r *Reconciler) serveSucceeded(key dashboard.BackoffKey) { r.serveBackoff.Forget(key) }

// retryText is a failure and when it is tried again.
func retryText(f dashboard.Failure) string {
	at := f.RetryAt.UTC().Format(time.RFC3339)
	if f.Count == 1 {
		return fmt.Sprintf("%s (retrying in %s, at %s)", f.Message, f.Wait, at)
	}
	return fmt.Sprintf("%s (failed %d times in a row; retrying in %s, at %s)", f.Message, f.Count, f.Wait, at)
}

// setServeRequestsCondition sets ServeRequestsFailing from the requests
// this pass made or held back, and forgets the failures of requests it no
// longer makes (a cluster that stopped being active or pending, a head Pod
// that was replaced). True names every failing request, the first one's
// reason; once none fails it turns False (it is never added before a
// failure).
func (r *Reconciler) setServeRequestsCondition(s *scope) {
	made := map[dashboard.BackoffKey]bool{}
	var failing []dashboard.Failure
	for _, key := range s.serveCalls {
		made[key] = true
		if f, ok := r.serveBackoff.Failing(key); ok {
			failing = append(failing, f)
		}
	}
	r.serveBackoff.Retain(client.ObjectKeyFromObject(s.rs), func(key dashboard.BackoffKey) bool { return made[key] })
	now := metav1.Time{Time: s.now}
	if len(failing) == 0 {
		if conditions.IsTrue(s.rs.Status.Conditions, rayv1.ServeRequestsFailing) {
			conditions.MarkFalse(&s.rs.Status.Conditions, rayv1.ServeRequestsFailing, rayv1.ServeRequestsSucceeded, msgServeRequestsSucceed, conditions.At(now, s.rs.Generation))
		}
		return
	}
	texts := make([]string, len(failing))
	for i, f := range failing {
		texts[i] = retryText(f)
	}
	conditions.MarkTrue(&s.rs.Status.Conditions, rayv1.ServeRequestsFailing, rayv1.RayServiceConditionReason(failing[0].Reason), strings.Join(texts, "; "), conditions.At(now, s.rs.Generation))
}
