package main

import (
	"context"
	"fmt"
	"os"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/raypod"
	"github.com/ray-operator/ray-operator/internal/rayservices"
)

// floorUserAgent is the benchmark client's user agent: the floor's writes
// are its own creates.
const floorUserAgent = "bench-scale"

// floor creates, with no operator, the objects the operator makes for N
// RayClusters like benchCluster's (the head Service, the head Pod and the
// worker Pods, built by the operator's own builders at its defaults) and
// waits until every Pod is Running and Ready. The clock starts before the
// first create and stops when the last cluster's Pods are all ready, as
// raycluster's does.
func (w *world) floor(ctx context.Context, res *Result) error {
	template, err := w.defaultedCluster(ctx)
	if err != nil {
		return err
	}
	var objs []client.Object
	for i := range w.n {
		cluster := template.DeepCopy()
		cluster.Name, cluster.Namespace = fmt.Sprintf("c%04d", i), w.o.namespaceOf(i)
		built, err := floorObjects(cluster)
		if err != nil {
			return err
		}
		objs = append(objs, built...)
	}
	began := w.startClock()
	if err := createAll(ctx, len(objs), func(ctx context.Context, i int) error {
		return w.client.Create(ctx, objs[i])
	}); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "bench-scale: %d objects of %d clusters created in %v\n", len(objs), w.n, time.Since(began).Round(time.Millisecond))
	ready := &clusterPods{perCluster: 1 + w.o.workers}
	if err := waitAll(ctx, w.client, w.o.listNamespace(), &corev1.PodList{}, w.n, ready, w.series); err != nil {
		return err
	}
	res.TimeToReadySeconds = time.Since(began).Seconds()
	if err := w.stopClock(res); err != nil {
		return err
	}
	writes, err := w.writesBy(ctx, floorUserAgent)
	if err != nil {
		return err
	}
	// Set-up, not the floor: the namespaces, and the dry run.
	delete(writes.ok, "create namespaces")
	delete(writes.ok, "create rayclusters")
	res.setWrites(writes)
	return nil
}

// defaultedCluster is benchCluster as the API server stores it (the CRD's
// defaults applied), from a dry-run create, so that the builders see what
// the operator would.
func (w *world) defaultedCluster(ctx context.Context) (*rayv1.RayCluster, error) {
	cluster := benchCluster("floor-template", w.o.namespaceOf(0), w.o.workers)
	if err := w.client.Create(ctx, cluster, client.DryRunAll); err != nil {
		return nil, fmt.Errorf("dry-run create of the floor's RayCluster: %w", err)
	}
	return cluster, nil
}

// floorObjects builds the head Service, head Pod and worker Pods the
// operator creates for cluster at its defaults, without owner references:
// there is no RayCluster to own them, and the garbage collector would
// delete objects whose owner is missing. The operator's pass also stamps
// two annotations on the head Pod (the spec hash and its version), which
// its RayCluster package keeps unexported; they are left out.
func floorObjects(cluster *rayv1.RayCluster) ([]client.Object, error) {
	opts := raypod.Options{}
	svc := rayservices.BuildHeadService(cluster, rayservices.HeadServiceOptions{})
	head, err := raypod.BuildHeadPod(cluster, opts)
	if err != nil {
		return nil, err
	}
	objs := []client.Object{svc, head}
	for g, group := range cluster.Spec.WorkerGroupSpecs {
		for r := range int(*group.Replicas) {
			pod, err := raypod.BuildWorkerPod(cluster, g, raypod.WorkerIndex{ReplicaIndex: r}, opts)
			if err != nil {
				return nil, err
			}
			objs = append(objs, pod)
		}
	}
	for _, obj := range objs {
		obj.SetOwnerReferences(nil)
	}
	return objs, nil
}

// clusterPods counts the clusters all of whose perCluster Pods are Running
// and Ready, from Pod events keyed by name.
type clusterPods struct {
	perCluster int
	pods       doneSet
	readyPods  map[string]int // cluster -> ready Pods
	ready      int
}

func (c *clusterPods) observe(obj client.Object, deleted bool) {
	if c.readyPods == nil {
		c.readyPods = map[string]int{}
	}
	name := obj.GetNamespace() + "/" + obj.GetName()
	cluster := obj.GetLabels()[rayv1.LabelCluster]
	if cluster == "" {
		return // not a bench Pod (all namespaces are watched with -namespaces)
	}
	before := c.pods.count
	c.pods.set(name, !deleted && podReady(obj.(*corev1.Pod)))
	if delta := c.pods.count - before; delta != 0 {
		was := c.readyPods[cluster] >= c.perCluster
		c.readyPods[cluster] += delta
		if is := c.readyPods[cluster] >= c.perCluster; is != was {
			if is {
				c.ready++
			} else {
				c.ready--
			}
		}
	}
}

func (c *clusterPods) count() int { return c.ready }

func podReady(pod *corev1.Pod) bool {
	if pod.Status.Phase != corev1.PodRunning {
		return false
	}
	for _, cond := range pod.Status.Conditions {
		if cond.Type == corev1.PodReady {
			return cond.Status == corev1.ConditionTrue
		}
	}
	return false
}
