// Package podworker runs one pod on the local node as a kubelet would: a
// Worker per pod owns the pod's state on one goroutine and drives it from
// creation to deletion. It creates the sandbox and volumes (retrying while
// a Secret or ConfigMap is missing), runs the init containers in order and
// sidecars alongside, starts the containers, restarts them per restart
// policy with the kubelet's crash-loop back-off, runs postStart and preStop
// hooks and startup, liveness and readiness probes, stops the pod with its
// grace period on deletion, and publishes the pod status a kubelet would
// write.
//
// Read it in the order a pod lives: worker.go (the goroutine and its
// events), admit.go (the node's host-access policy, applied once: a refused
// pod fails at once, as a kubelet rejects a pod it cannot admit), sync.go
// (what should run now), start.go, probes.go, handlers.go and grpcprobe.go,
// stop.go, then status.go (with readiness gates); deadline.go fails a pod
// that outlives its activeDeadlineSeconds, and imagechange.go restarts a
// container whose image changed. container.go holds one container's state
// and backoff.go its back-off. access.go answers the kubelet API (logs,
// exec, attach, port-forward).
//
// The worker reaches the sandbox and podinputs packages through the small
// interfaces of deps.go, over those packages' own types, so that the state
// machine is tested on in-memory fakes.
package podworker
