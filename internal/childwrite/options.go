package childwrite

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Option makes one write differ from the plain one; each says why a
// caller would want it.
type Option func(*options)

type options struct {
	alreadyExists        func(context.Context) bool
	alreadyExistsCreated bool
	notFoundDeleted      bool
	deleteOpts           []client.DeleteOption
	doneBy               func()
	relate               bool
	errorAs              error
	raw                  bool
}

func collect(opts []Option) options {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

func (o options) related(obj client.Object) runtime.Object {
	if o.relate {
		return obj
	}
	return nil
}

// IgnoreAlreadyExists takes a create answered AlreadyExists as no failure,
// with no event: the child's name is deterministic, so the object is one an
// earlier pass created that the cache does not show yet, and the next pass
// sees it.
func IgnoreAlreadyExists() Option {
	return AlreadyExistsIf(func(context.Context) bool { return true })
}

// AlreadyExistsIf is IgnoreAlreadyExists for the objects ours accepts: an
// owner that must not adopt a stranger's object of the same name (a
// RayCluster of a RayJob or RayService) checks that the stored one is its
// own; otherwise AlreadyExists is a failure.
func AlreadyExistsIf(ours func(context.Context) bool) Option {
	return func(o *options) { o.alreadyExists = ours }
}

// AlreadyExistsAsCreated records a create answered AlreadyExists as done,
// event and all, as KubeRay does for a RayService's per-cluster serve
// Service.
func AlreadyExistsAsCreated() Option {
	return func(o *options) { o.alreadyExistsCreated = true }
}

// NotFoundAsDeleted records a delete answered NotFound as done, event and
// all, as KubeRay does for the children whose deletion it reports without
// first reading them (a RayService's Services and Gateway objects, a
// RayJob's self-deletion).
func NotFoundAsDeleted() Option {
	return func(o *options) { o.notFoundDeleted = true }
}

// DeleteOptions passes opts to the delete: a propagation policy (a Job's
// or RayCluster's Pods go after it) or a UID precondition (never delete a
// successor of the same name).
func DeleteOptions(opts ...client.DeleteOption) Option {
	return func(o *options) { o.deleteOpts = append(o.deleteOpts, opts...) }
}

// DoneBy reports a write that was done by calling done instead of
// recording the Normal event: RayCluster batches its creation events per
// pass (--creation-events=per-pass).
func DoneBy(done func()) Option {
	return func(o *options) { o.doneBy = done }
}

// Related names the child as the related object of the events that find it
// existing (not a failed create's), as KubeRay's RayCronJob events do.
func Related() Option {
	return func(o *options) { o.relate = true }
}

// RawError returns the API server's answer as it is: the caller puts it in
// a note of KubeRay's that names the object itself (RayCluster's
// "Failed to reconcile mTLS <step>: <error>").
func RawError() Option {
	return func(o *options) { o.raw = true }
}

// ErrorAs returns the API server's answer joined to reason (errors.Join)
// instead of wrapping it with the write and the object's name: a RayCluster's
// Pod failures become its ReplicaFailure condition, whose message KubeRay
// writes as the reason, a newline and the answer.
func ErrorAs(reason error) Option {
	return func(o *options) { o.errorAs = reason }
}
