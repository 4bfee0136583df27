package kueue_test

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// event is one change the timeline saw, reduced to what the tests check.
type event struct {
	// rv is the object's resourceVersion at the change: one etcd serves
	// all three kinds, so its revisions order the changes of the three
	// watches, whose deliveries may interleave otherwise.
	rv         uint64
	kind, name string
	deleted    bool
	// owner is the RayJob that owns a RayCluster or a Workload.
	owner string
	// A RayJob's suspend and whether its deployment status is terminal.
	suspended, terminal bool
	// The Workload condition types that are True.
	trueConditions []string
}

func (e event) String() string {
	return fmt.Sprintf("%s %s (owner %q) deleted=%v suspended=%v terminal=%v true=%v", e.kind, e.name, e.owner, e.deleted, e.suspended, e.terminal, e.trueConditions)
}

// timeline records, in the order the API server's watches deliver them,
// the changes of a namespace's RayJobs, RayClusters and Workloads.
type timeline struct {
	mu     sync.Mutex
	events []event
	errs   []error
}

// watchNamespace records ns until t ends (or stop is called).
func (s *suite) watchNamespace(t *testing.T, ns string) (*timeline, context.CancelFunc) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	tl := &timeline{}
	workloads := &unstructured.UnstructuredList{}
	workloads.SetGroupVersionKind(workloadGVK.GroupVersion().WithKind("WorkloadList"))
	var watches []watch.Interface
	for _, list := range []client.ObjectList{&rayv1.RayJobList{}, &rayv1.RayClusterList{}, workloads} {
		w, err := s.WatchClient.Watch(ctx, list, client.InNamespace(ns))
		if err != nil {
			cancel()
			t.Fatalf("watching %T: %v", list, err)
		}
		watches = append(watches, w)
	}
	var wg sync.WaitGroup
	for _, w := range watches {
		wg.Go(func() { tl.follow(ctx, w) })
	}
	stop := func() {
		cancel()
		for _, w := range watches {
			w.Stop()
		}
		wg.Wait()
	}
	t.Cleanup(stop)
	return tl, stop
}

func (tl *timeline) follow(ctx context.Context, w watch.Interface) {
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-w.ResultChan():
			if !ok {
				if ctx.Err() == nil {
					tl.add(event{}, fmt.Errorf("a watch ended early"))
				}
				return
			}
			e, err := toEvent(ev)
			tl.add(e, err)
		}
	}
}

func (tl *timeline) add(e event, err error) {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	if err != nil {
		tl.errs = append(tl.errs, err)
		return
	}
	tl.events = append(tl.events, e)
}

// snapshot returns the events so far in etcd's order, or the first
// watch error.
func (tl *timeline) snapshot() ([]event, error) {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	if len(tl.errs) > 0 {
		return nil, tl.errs[0]
	}
	events := slices.Clone(tl.events)
	slices.SortStableFunc(events, func(a, b event) int { return cmp.Compare(a.rv, b.rv) })
	return events, nil
}

func toEvent(ev watch.Event) (event, error) {
	if ev.Type == watch.Error || ev.Type == watch.Bookmark {
		return event{}, fmt.Errorf("watch event %s: %v", ev.Type, ev.Object)
	}
	e := event{deleted: ev.Type == watch.Deleted}
	if o, ok := ev.Object.(metav1.Object); ok {
		rv, err := strconv.ParseUint(o.GetResourceVersion(), 10, 64)
		if err != nil {
			return e, fmt.Errorf("resourceVersion %q: %w", o.GetResourceVersion(), err)
		}
		e.rv = rv
	}
	switch o := ev.Object.(type) {
	case *rayv1.RayJob:
		e.kind, e.name, e.suspended = "RayJob", o.Name, o.Spec.Suspend
		e.terminal = o.Status.JobDeploymentStatus == rayv1.JobDeploymentStatusComplete || o.Status.JobDeploymentStatus == rayv1.JobDeploymentStatusFailed
	case *rayv1.RayCluster:
		e.kind, e.name, e.owner = "RayCluster", o.Name, ownerName(o.OwnerReferences)
	case *unstructured.Unstructured:
		e.kind, e.name = "Workload", o.GetName()
		for _, ref := range o.GetOwnerReferences() {
			e.owner = ref.Name
		}
		conds, _, _ := unstructured.NestedSlice(o.Object, "status", "conditions")
		for _, c := range conds {
			if m, _ := c.(map[string]any); m["status"] == "True" {
				e.trueConditions = append(e.trueConditions, fmt.Sprint(m["type"]))
			}
		}
	default:
		return e, fmt.Errorf("unexpected watch object %T", ev.Object)
	}
	return e, nil
}

func ownerName(refs []metav1.OwnerReference) string {
	for _, r := range refs {
		return r.Name
	}
	return ""
}

// replay is the state of the namespace after each event, and what the
// tests check on it.
type replay struct {
	admitted     map[string]bool   // RayJob -> its Workload is Admitted and not Finished
	terminal     map[string]bool   // RayJob -> its deployment status is Complete or Failed
	clusters     map[string]string // RayCluster -> its RayJob
	admissions   []string          // RayJobs in the order their Workloads were first Admitted
	seenTrue     map[string]map[string]bool
	maxAdmitted  int
	maxLive      int // RayClusters at once whose RayJob had not ended
	maxClusters  int // RayClusters at once, ended or not
	violationLog []string
}

// replayEvents computes the state after each event; violations of "one
// admitted Workload and one live RayCluster at a time" are logged.
func replayEvents(events []event) *replay {
	r := &replay{admitted: map[string]bool{}, terminal: map[string]bool{}, clusters: map[string]string{}, seenTrue: map[string]map[string]bool{}}
	for i, e := range events {
		r.apply(e)
		admitted, live := r.counts()
		if admitted > 1 || live > 1 {
			r.violationLog = append(r.violationLog, fmt.Sprintf("after event %d (%s): %d admitted Workloads, %d live RayClusters %v", i, e, admitted, live, r.clusters))
		}
		r.maxAdmitted, r.maxLive, r.maxClusters = max(r.maxAdmitted, admitted), max(r.maxLive, live), max(r.maxClusters, len(r.clusters))
	}
	return r
}

func (r *replay) apply(e event) {
	switch e.kind {
	case "RayJob":
		r.terminal[e.name] = e.terminal
	case "RayCluster":
		if e.deleted {
			delete(r.clusters, e.name)
		} else {
			r.clusters[e.name] = e.owner
		}
	case "Workload":
		if r.seenTrue[e.owner] == nil {
			r.seenTrue[e.owner] = map[string]bool{}
		}
		for _, c := range e.trueConditions {
			r.seenTrue[e.owner][c] = true
		}
		admitted := !e.deleted && slices.Contains(e.trueConditions, "Admitted") && !slices.Contains(e.trueConditions, "Finished")
		if admitted && !r.admitted[e.owner] {
			r.admissions = append(r.admissions, e.owner)
		}
		r.admitted[e.owner] = admitted
	}
}

func (r *replay) counts() (admitted, live int) {
	for _, a := range r.admitted {
		if a {
			admitted++
		}
	}
	for _, job := range r.clusters {
		if !r.terminal[job] {
			live++
		}
	}
	return admitted, live
}

// firstIndex returns the index of the first event that matches, or -1.
func firstIndex(events []event, match func(event) bool) int {
	for i, e := range events {
		if match(e) {
			return i
		}
	}
	return -1
}

func describe(events []event) string {
	var b strings.Builder
	for i, e := range events {
		fmt.Fprintf(&b, "%3d %s\n", i, e)
	}
	return b.String()
}
