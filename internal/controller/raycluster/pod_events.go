package raycluster

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// maxEventNote is the longest note the API server takes for an event
// (events.k8s.io/v1 validation: 1 KiB).
const maxEventNote = 1024

// podChange is one kind of Pod write a pass reports: a creation or a
// deletion, of one role in one group, for one reason.
type podChange struct {
	reason, action, role, group, why string
}

// podEventBatch collects the Pods a pass created and deleted, so that each
// kind of change is reported by one event that names every Pod, instead of
// one event per Pod: a 1,000-cluster start-up writes a quarter as many
// events. Failures are still reported one by one, as they happen.
type podEventBatch struct {
	order []podChange
	pods  map[podChange][]string
}

func (b *podEventBatch) add(c podChange, pod string) {
	if b.pods == nil {
		b.pods = map[podChange][]string{}
	}
	if _, seen := b.pods[c]; !seen {
		b.order = append(b.order, c)
	}
	b.pods[c] = append(b.pods[c], pod)
}

// flushPodEvents records the pass's batched Pod events, in the order their
// first Pod was written.
func (r *Reconciler) flushPodEvents(s *scope) {
	for _, c := range s.podEvents.order {
		r.event(s.cluster, corev1.EventTypeNormal, c.reason, c.action, "%s", podChangeNote(c, s.cluster.Namespace, s.podEvents.pods[c]))
	}
	s.podEvents = podEventBatch{}
}

// podChangeNote says what happened to pods: KubeRay's message for one Pod
// ("Created worker Pod ns/name", "Deleted worker Pod ns/name: why"), and
// for several the count, the group and as many names (sorted) as fit the
// API server's limit on notes.
func podChangeNote(c podChange, namespace string, pods []string) string {
	verb := "Created"
	if c.action == actionDelete {
		verb = "Deleted"
	}
	if len(pods) == 1 {
		note := fmt.Sprintf("%s %s Pod %s/%s", verb, c.role, namespace, pods[0])
		if c.why != "" {
			note += ": " + c.why
		}
		return note
	}
	pods = slices.Sorted(slices.Values(pods))
	head := fmt.Sprintf("%s %d %s Pods of group %s in %s", verb, len(pods), c.role, c.group, namespace)
	if c.why != "" {
		head += " (" + c.why + ")"
	}
	return head + ": " + nameList(pods, maxEventNote-len(head)-2)
}

// nameList joins names with ", " in at most limit bytes, ending with
// "and N more" when not all fit.
func nameList(names []string, limit int) string {
	var b strings.Builder
	for i, name := range names {
		sep := ""
		if i > 0 {
			sep = ", "
		}
		more := fmt.Sprintf(", and %d more", len(names)-i)
		if i == len(names)-1 {
			more = ""
		}
		if b.Len()+len(sep)+len(name)+len(more) > limit {
			fmt.Fprintf(&b, "%sand %d more", sep, len(names)-i)
			return b.String()
		}
		b.WriteString(sep + name)
	}
	return b.String()
}
