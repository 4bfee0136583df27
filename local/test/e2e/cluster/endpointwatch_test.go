package cluster_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// endpointLeft is when a Pod's endpoint left a Service, or why that was not
// seen.
type endpointLeft struct {
	at  time.Time
	err error
}

// watchEndpointLeaves watches the EndpointSlices of Service svc, whose
// endpoint for Pod pod is ready now (t fails otherwise), and sends once on
// the channel returned when the first change shows that endpoint gone or
// not ready: the moment the EndpointSlice controller took the Pod out.
// kube-proxy follows from there.
func (s *suite) watchEndpointLeaves(ctx context.Context, t *testing.T, ns, svc, pod string) <-chan endpointLeft {
	t.Helper()
	slices := s.Clientset.DiscoveryV1().EndpointSlices(ns)
	sel := metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + svc}
	list, err := slices.List(ctx, sel)
	if err != nil {
		t.Fatal(err)
	}
	ready := map[string]bool{}
	for i := range list.Items {
		ready[list.Items[i].Name] = readyEndpointOf(&list.Items[i], pod)
	}
	if !anyTrue(ready) {
		t.Fatalf("Service %s has no ready endpoint for Pod %s: slices %v", svc, pod, ready)
	}
	sel.ResourceVersion = list.ResourceVersion
	w, err := slices.Watch(ctx, sel)
	if err != nil {
		t.Fatal(err)
	}
	left := make(chan endpointLeft, 1)
	go func() {
		defer w.Stop()
		left <- untilNotReady(w, ready, pod)
	}()
	return left
}

// untilNotReady reads w until no slice in ready (updated by each event)
// holds a ready endpoint for pod.
func untilNotReady(w watch.Interface, ready map[string]bool, pod string) endpointLeft {
	for ev := range w.ResultChan() {
		es, ok := ev.Object.(*discoveryv1.EndpointSlice)
		if !ok {
			return endpointLeft{err: fmt.Errorf("watch event %s of %T", ev.Type, ev.Object)}
		}
		ready[es.Name] = ev.Type != watch.Deleted && readyEndpointOf(es, pod)
		if !anyTrue(ready) {
			return endpointLeft{at: time.Now()}
		}
	}
	return endpointLeft{err: fmt.Errorf("the EndpointSlice watch ended while Pod %s was still a ready endpoint", pod)}
}

// readyEndpointOf tells whether es has a ready endpoint for Pod pod (an
// endpoint without the condition counts as ready, as kube-proxy reads it).
func readyEndpointOf(es *discoveryv1.EndpointSlice, pod string) bool {
	for _, ep := range es.Endpoints {
		if ep.TargetRef != nil && ep.TargetRef.Name == pod && (ep.Conditions.Ready == nil || *ep.Conditions.Ready) {
			return true
		}
	}
	return false
}

func anyTrue(m map[string]bool) bool {
	for _, v := range m {
		if v {
			return true
		}
	}
	return false
}
