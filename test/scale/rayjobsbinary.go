package main

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// kubeProxyFlag makes an operator, this one or KubeRay's, reach each Ray
// dashboard through the API server's service proxy: the API server then
// dials the head Pod's address, so no cluster DNS is needed.
const kubeProxyFlag = "--use-kubernetes-proxy"

// rayJobsBinary runs the operator binary (this one, or -operator-binary)
// with kubeProxyFlag, creates N HTTPMode RayJobs at once and waits until
// every one is Complete. Every dashboard call goes from the operator
// through the API server to the head Pod's address, which the simulated
// dashboards answer (see serveNetwork), so both operators are measured the
// same way; the proxied calls cost the API server alike for both.
func (w *world) rayJobsBinary(ctx context.Context, res *Result) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	heads, err := w.watchHeads(ctx)
	if err != nil {
		return err
	}
	dash := newSimDashboards(w.o)
	if _, err := dash.serveNetwork(fmt.Sprintf("0.0.0.0:%d", dashboardPort), heads.clusterOf); err != nil {
		return err
	}
	defer dash.close()
	go dash.runJobs(ctx)
	done := &completions{at: map[string]time.Duration{}, cluster: map[string]string{}}
	err = w.runBinary(ctx, res, binaryRun{
		what:      "RayJobs",
		extraArgs: []string{kubeProxyFlag},
		create: func(ctx context.Context, i int) error {
			return w.client.Create(ctx, benchJob(fmt.Sprintf("j%04d", i), w.o.namespaceOf(i), w.o.workers))
		},
		list:    &rayv1.RayJobList{},
		done:    done.record,
		started: func(began time.Time) { done.began = began },
	})
	if err != nil {
		return err
	}
	res.Extra = dash.extra(w.n)
	done.byClass(dash, res.Extra)
	return nil
}

// headPods are the run's head Pods by address, from an informer.
type headPods struct {
	indexer cache.Indexer
}

// byPodIP indexes Pods by status.podIP.
const byPodIP = "podIP"

// watchHeads starts an informer on the run's head Pods; it runs until ctx
// ends.
func (w *world) watchHeads(ctx context.Context) (*headPods, error) {
	cfg := *w.cp.RESTConfig
	cfg.UserAgent = "bench-scale"
	clientset, err := kubernetes.NewForConfig(&cfg)
	if err != nil {
		return nil, err
	}
	factory := informers.NewSharedInformerFactoryWithOptions(clientset, 0, informers.WithNamespace(w.o.listNamespace()),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.LabelSelector = rayv1.LabelNodeType + "=" + string(rayv1.HeadNode)
		}))
	informer := factory.Core().V1().Pods().Informer()
	if err := informer.AddIndexers(cache.Indexers{byPodIP: podIPs}); err != nil {
		return nil, err
	}
	factory.Start(ctx.Done())
	for typ, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return nil, fmt.Errorf("the informer of %v did not sync", typ)
		}
	}
	return &headPods{indexer: informer.GetIndexer()}, nil
}

func podIPs(obj any) ([]string, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok || pod.Status.PodIP == "" {
		return nil, nil
	}
	return []string{pod.Status.PodIP}, nil
}

// clusterOf names the RayCluster of the head Pod at ip.
func (h *headPods) clusterOf(ip string) (string, bool) {
	objs, err := h.indexer.ByIndex(byPodIP, ip)
	if err != nil || len(objs) == 0 {
		return "", false
	}
	cluster := objs[0].(*corev1.Pod).Labels[rayv1.LabelCluster]
	return cluster, cluster != ""
}
