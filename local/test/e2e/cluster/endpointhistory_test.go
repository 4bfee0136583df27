package cluster_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// endpointHistory is every change of a Service's EndpointSlices while a
// test watches them: which Pods were endpoints, and whether each was ready,
// at each moment. A test that sees requests refused prints it, so that the
// failure says whether the Service had no ready endpoint then (kube-proxy
// refuses) or sent the request to a Pod that did not listen.
type endpointHistory struct {
	mu      sync.Mutex
	changes []endpointChange
}

type endpointChange struct {
	at        time.Time
	event     watch.EventType
	slice     string
	endpoints string
}

// recordEndpoints watches Service svc's EndpointSlices until t ends.
func (s *suite) recordEndpoints(ctx context.Context, t *testing.T, ns, svc string) *endpointHistory {
	t.Helper()
	sel := metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + svc}
	w, err := s.Clientset.DiscoveryV1().EndpointSlices(ns).Watch(ctx, sel)
	if err != nil {
		t.Fatal(err)
	}
	h := &endpointHistory{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			if es, ok := ev.Object.(*discoveryv1.EndpointSlice); ok {
				h.add(endpointChange{at: time.Now(), event: ev.Type, slice: es.Name, endpoints: describeEndpoints(es)})
			}
		}
	}()
	t.Cleanup(func() { w.Stop(); <-done })
	return h
}

func (h *endpointHistory) add(c endpointChange) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.changes = append(h.changes, c)
}

// since lists the changes with their time after ref.
func (h *endpointHistory) since(ref time.Time) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	lines := make([]string, 0, len(h.changes))
	for _, c := range h.changes {
		lines = append(lines, fmt.Sprintf("  %+v %s %s: %s", c.at.Sub(ref).Round(time.Millisecond), c.event, c.slice, c.endpoints))
	}
	return strings.Join(lines, "\n")
}

// describeEndpoints names each endpoint's Pod with its conditions.
func describeEndpoints(es *discoveryv1.EndpointSlice) string {
	if len(es.Endpoints) == 0 {
		return "none"
	}
	parts := make([]string, 0, len(es.Endpoints))
	for _, ep := range es.Endpoints {
		name := strings.Join(ep.Addresses, ",")
		if ep.TargetRef != nil {
			name = ep.TargetRef.Name
		}
		parts = append(parts, fmt.Sprintf("%s(ready=%s serving=%s terminating=%s)", name,
			condition(ep.Conditions.Ready), condition(ep.Conditions.Serving), condition(ep.Conditions.Terminating)))
	}
	return strings.Join(parts, " ")
}

func condition(b *bool) string {
	if b == nil {
		return "-"
	}
	return fmt.Sprint(*b)
}
