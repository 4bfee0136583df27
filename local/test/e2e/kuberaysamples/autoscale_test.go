package kuberaysamples_test

import (
	"fmt"
	"testing"
	"time"
)

// The autoscaler samples' worker group and the paths of the scripts they
// mount on the head (their ConfigMap ray-example).
const (
	autoscaleGroup     = "small-group"
	detachedActor      = "/home/ray/samples/detached_actor.py"
	terminateActor     = "/home/ray/samples/terminate_detached_actor.py"
	autoscaleActorName = "actor1"
	// scaleTimeout bounds each way: up, a worker Pod starts and joins;
	// down, the worker idles for the samples' idleTimeoutSeconds (60)
	// and the autoscaler's next loops remove it.
	scaleTimeout = 5 * time.Minute
)

// checkAutoscale: as checkCluster (the head alone: the group starts at 0
// workers), then the sample's detached_actor.py, which asks for an actor
// of one CPU that the head (num-cpus 0) cannot hold, must bring one worker
// of small-group, Running and Ready; and after terminate_detached_actor.py
// the idle worker must be removed, the group back at 0 replicas.
func (s *suite) checkAutoscale(t *testing.T, ns string, objs sampleObjects) (string, time.Duration) {
	t.Helper()
	measured, took := s.checkCluster(t, ns, objs)
	ctx := t.Context()
	head := s.WaitHead(ctx, t, ns, objs.cluster, "", readyTimeout)
	s.runOnHead(t, ns, head, detachedActor)
	began := time.Now()
	s.WaitWorkerGroup(ctx, t, ns, objs.cluster, autoscaleGroup, 1, scaleTimeout)
	up := time.Since(began)
	s.runOnHead(t, ns, head, terminateActor)
	began = time.Now()
	s.WaitWorkerGroup(ctx, t, ns, objs.cluster, autoscaleGroup, 0, scaleTimeout)
	down := time.Since(began)
	t.Logf("scaled up to a worker in %v; down again %v after the actor was killed", up.Round(time.Second), down.Round(time.Second))
	return fmt.Sprintf("%s; a detached actor brought a worker in %v, gone %v after the actor was killed",
		measured, up.Round(time.Second), down.Round(time.Second)), took
}

// runOnHead runs one of the sample's scripts with the actor's name in the
// head's Ray container, as the guide does (kubectl exec ... python).
func (s *suite) runOnHead(t *testing.T, ns, head, script string) {
	t.Helper()
	out, err := s.Kubectl(t.Context(), "exec", "-n", ns, head, "-c", "ray-head", "--", "python", script, autoscaleActorName)
	if err != nil {
		t.Fatalf("python %s %s in %s: %v\n%s", script, autoscaleActorName, head, err, out)
	}
}
