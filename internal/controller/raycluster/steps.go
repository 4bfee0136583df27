package raycluster

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/passsteps"
)

// scope is what one reconcile pass works on.
type scope struct {
	// cluster is the object as read at the start of the pass. Steps read
	// it; only clearWorkersToDelete writes its spec, through the API.
	cluster *rayv1.RayCluster
	// original keeps the status as read, to decide whether to write.
	original *rayv1.RayCluster
	// workersToDeleteDone lists the worker groups whose workersToDelete
	// were carried out in this pass, to be cleared from the spec.
	workersToDeleteDone []string
	// pods is the snapshot of the cluster's Pods the Pod steps work on,
	// listed once by clusterPods; nil until then.
	pods *podSnapshot
	// podsWritten says the pass created, deleted or updated Pods (or tried
	// to), so that pods may no longer show them.
	podsWritten bool
	// podsCreated says the pass created Pods, which its cache cannot show
	// yet.
	podsCreated bool
	// scaleBudget is how many more worker Pods this pass may create or
	// delete to scale; scaleDeferred says some were left for a later pass.
	scaleBudget   int
	scaleDeferred bool
	// events are the Pod creations and deletions of the pass (and, with
	// creation events per pass, its other creations), reported once it
	// ends.
	events eventBatch
	// mtlsChecked and mtlsErr keep the pass's one check of the mTLS
	// Secrets the Pods mount.
	mtlsChecked bool
	mtlsErr     error
	// mtlsExpiries are the expiry times of the certificates the operator
	// issued or read this pass, by Certificate name.
	mtlsExpiries map[string]time.Time
	// idleCondition is the RayClusterIdle condition the idle check
	// decided on; nil leaves it as it is.
	idleCondition *metav1.Condition
	// held are creates held back to go out with the pass's next round of
	// Pod creates: the head Service and the head Pod of a new cluster are
	// created in one round trip instead of two. Whatever is still held
	// when the pass ends is sent then.
	held []heldCreate
	// createRound is how many creates the pass's next round of Pod creates
	// may send (0 before its first round): see createPods.
	createRound int
	// createdHeadService is the head Service this pass created, as the API
	// server answered the create (with its cluster IP): the status reports
	// it while the cache does not show it yet, instead of leaving it to a
	// later pass and a second status write.
	createdHeadService *corev1.Service
	// cacheBehind says the cache does not show a child this controller
	// created that exists (a held create found it already there, or a
	// group waits for the cache to show the Pods an earlier pass created),
	// so a status computed now would lack it (see deferStatus).
	cacheBehind bool
	// deleted says the pass deleted the cluster (idle termination): there
	// is no status left to write.
	deleted bool
	// noStatus says the pass ended before anything it would report: the
	// finalizer could not be added.
	noStatus bool
}

func newScope(cluster *rayv1.RayCluster, scaleBudget int) *scope {
	return &scope{cluster: cluster, original: cluster.DeepCopy(), scaleBudget: scaleBudget}
}

// newScopeFrom is newScope for a cluster copied from cached, the informer
// cache's own object: while the copy is still what was read (no write
// since), cached is the original, read only, instead of a second copy (one
// copy of every RayCluster per pass was 1.9 % of the operator's allocated
// bytes at 10,000 RayClusters). The integration suites run with client-go's
// cache mutation detector, which fails them if anything changes it.
func newScopeFrom(cluster, cached *rayv1.RayCluster, scaleBudget int) *scope {
	if cluster.ResourceVersion != cached.ResourceVersion {
		return newScope(cluster, scaleBudget)
	}
	return &scope{cluster: cluster, original: cached, scaleBudget: scaleBudget}
}

// takeScaleBudget returns how many of n Pod writes this pass may make, and
// records when it must leave some for a later pass.
func (s *scope) takeScaleBudget(n int) int {
	if n > s.scaleBudget {
		s.scaleDeferred = true
		n = s.scaleBudget
	}
	s.scaleBudget -= n
	return n
}

// orderedSteps are the stages of a pass, in KubeRay's order: what the head
// Pod needs (its service account, the auth Secret, the claim of the
// embedded GCS store) exists before the Pods are created, and so do the
// NetworkPolicies that isolate them. The head Service, which the workers
// resolve, is created together with the head Pod (in one round trip; see
// scope.held), and so before any worker.
func (r *Reconciler) orderedSteps() []passsteps.Step[*scope] {
	return []passsteps.Step[*scope]{
		{Name: "GCSFTFinalizer", Run: r.ensureGCSFTFinalizer},
		{Name: "IdleTermination", Run: r.reconcileIdle},
		{Name: "AutoscalerServiceAccount", Run: r.reconcileAutoscalerServiceAccount},
		{Name: "AutoscalerRole", Run: r.reconcileAutoscalerRole},
		{Name: "AutoscalerRoleBinding", Run: r.reconcileAutoscalerRoleBinding},
		{Name: "Ingress", Run: r.reconcileIngress},
		{Name: "AuthSecret", Run: r.reconcileAuthSecret},
		{Name: "HeadService", Run: r.reconcileHeadService},
		{Name: "HeadlessService", Run: r.reconcileHeadlessService},
		{Name: "ServeService", Run: r.reconcileServeService},
		{Name: "GCSStoragePVC", Run: r.reconcileGCSStoragePVC},
		{Name: "NetworkPolicies", Run: r.reconcileNetworkPolicies},
		{Name: "MTLS", Run: r.reconcileMTLS},
		{Name: "Pods", Run: r.reconcilePods},
	}
}
