package rayservice

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/dashboard"
)

// scope is what one pass works on.
type scope struct {
	// rs is the RayService as read; steps change only its status.
	rs *rayv1.RayService
	// original is the status as read, to decide whether to write.
	original *rayv1.RayServiceStatuses
	// now is the time of the pass.
	now time.Time
	// active and pending are the clusters named in status, nil when unnamed
	// or missing.
	active, pending *rayv1.RayCluster
	// heads are the head Pods of active and pending by cluster name, as the
	// serve-label step found them (absent: no head Pod).
	heads map[string]*corev1.Pod
	// activeReady and pendingReady say every application of the cluster is
	// RUNNING.
	activeReady, pendingReady bool
	// prepareNew says the spec asks for a new cluster (see
	// shouldPrepareNewCluster); computed once the clusters are known.
	prepareNew bool
	// servingCluster is the cluster the RayService's Services select after
	// this pass ("" when there are none yet).
	servingCluster string
	// gateway and route are the RayService's Gateway and HTTPRoute of an
	// incremental upgrade (nil: none), read once per pass when
	// trafficLoaded.
	gateway       *gwv1.Gateway
	route         *gwv1.HTTPRoute
	trafficLoaded bool
	// rollbackCompleted says this pass ended an incremental rollback.
	rollbackCompleted bool
	// serveCalls are the requests to Ray Serve this pass made or held back
	// (see servefaults.go), and activeServeUnknown says the active
	// cluster's Serve API is in a back-off.
	serveCalls         []dashboard.BackoffKey
	activeServeUnknown bool
}

func newScope(rs *rayv1.RayService, now time.Time) *scope {
	return &scope{rs: rs, original: rs.Status.DeepCopy(), now: now, heads: map[string]*corev1.Pod{}}
}

// activeName and pendingName are the cluster names in status.
func (s *scope) activeName() string  { return s.rs.Status.ActiveServiceStatus.RayClusterName }
func (s *scope) pendingName() string { return s.rs.Status.PendingServiceStatus.RayClusterName }
