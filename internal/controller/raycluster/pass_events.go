package raycluster

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	configv1alpha1 "github.com/ray-operator/ray-operator/api/config/v1alpha1"
)

// maxEventNote is the longest note the API server takes for an event
// (events.k8s.io/v1 validation: 1 KiB).
const maxEventNote = 1024

// reasonCreatedResources is the reason of the one event a pass records for
// everything it created when creation events are per pass
// (--creation-events=per-pass). Not KubeRay's: KubeRay records one event
// per object created.
const reasonCreatedResources = "CreatedResources"

// childChange is one kind of write a pass reports: a creation or a
// deletion, of one kind of object (noun: "head Pod", "worker Pod",
// "service"), in one group, for one reason.
type childChange struct {
	reason, action, noun, group, why string
}

// eventBatch collects the objects a pass created and deleted, so that each
// kind of change is reported by one event that names every object, instead
// of one event per object: a 1,000-cluster start-up writes a quarter as
// many events. Failures are still reported one by one, as they happen.
type eventBatch struct {
	order []childChange
	names map[childChange][]string
}

func (b *eventBatch) add(c childChange, name string) {
	if b.names == nil {
		b.names = map[childChange][]string{}
	}
	if _, seen := b.names[c]; !seen {
		b.order = append(b.order, c)
	}
	b.names[c] = append(b.names[c], name)
}

// recordCreation reports a created child other than a Pod: at once with its
// own reason (KubeRay's event), or, with creation events per pass, in the
// pass's batch.
func (r *Reconciler) recordCreation(s *scope, ev childEvents, namespace, name string) {
	if r.opts.CreationEvents != configv1alpha1.CreationEventsPerPass {
		r.events.Eventf(s.cluster, nil, corev1.EventTypeNormal, ev.created, actionCreate, "Created %s %s/%s", ev.kind, namespace, name)
		return
	}
	s.events.add(childChange{reason: ev.created, action: actionCreate, noun: ev.kind}, name)
}

// flushEvents records the pass's batched events, in the order their first
// object was written. With creation events per pass, the creations of more
// than one kind share one event; deletions keep one event per kind.
func (r *Reconciler) flushEvents(s *scope) {
	changes := s.events.order
	if r.opts.CreationEvents == configv1alpha1.CreationEventsPerPass {
		var created []childChange
		created, changes = splitCreations(changes)
		if len(created) > 1 {
			r.events.Eventf(s.cluster, nil, corev1.EventTypeNormal, reasonCreatedResources, actionCreate, "%s",
				passCreationNote(created, s.cluster.Namespace, s.events.names))
		} else {
			changes = append(created, changes...)
		}
	}
	for _, c := range changes {
		r.events.Eventf(s.cluster, nil, corev1.EventTypeNormal, c.reason, c.action, "%s", changeNote(c, s.cluster.Namespace, s.events.names[c]))
	}
	s.events = eventBatch{}
}

// splitCreations separates the creations from the other changes, keeping
// their order.
func splitCreations(changes []childChange) (created, rest []childChange) {
	for _, c := range changes {
		if c.action == actionCreate {
			created = append(created, c)
		} else {
			rest = append(rest, c)
		}
	}
	return created, rest
}

// changeNote says what happened to the named objects: KubeRay's message for
// one ("Created worker Pod ns/name", "Deleted worker Pod ns/name: why"),
// and for several the count, the group and as many names (sorted) as fit
// the API server's limit on notes.
func changeNote(c childChange, namespace string, names []string) string {
	verb := "Created"
	if c.action == actionDelete {
		verb = "Deleted"
	}
	if len(names) == 1 {
		note := fmt.Sprintf("%s %s %s/%s", verb, c.noun, namespace, names[0])
		if c.why != "" {
			note += ": " + c.why
		}
		return note
	}
	head := fmt.Sprintf("%s %d %ss", verb, len(names), c.noun)
	if c.group != "" {
		head += " of group " + c.group
	}
	head += " in " + namespace
	if c.why != "" {
		head += " (" + c.why + ")"
	}
	return head + ": " + joinWithin(slices.Sorted(slices.Values(names)), ", ", maxEventNote-len(head)-2)
}

// passCreationNote names everything a pass created, kind by kind in the
// order of creation: "Created in ns: service a-head-svc; head Pod a-head-x;
// 3 worker Pods of group small: b, c, d". Each kind names as many objects
// as fit in a quarter of the API server's limit on notes (a fraction more
// when fewer kinds); kinds beyond the limit (hundreds of one-Pod groups) are
// counted.
func passCreationNote(created []childChange, namespace string, names map[childChange][]string) string {
	lead := "Created in " + namespace + ": "
	share := (maxEventNote - len(lead)) / min(len(created), 4)
	parts := make([]string, len(created))
	for i, c := range created {
		list := slices.Sorted(slices.Values(names[c]))
		head := c.noun
		if len(list) > 1 {
			head = fmt.Sprintf("%d %ss", len(list), c.noun)
		}
		if c.group != "" {
			head += " of group " + c.group
		}
		parts[i] = head + " " + list[0]
		if len(list) > 1 || len(parts[i]) > share {
			parts[i] = head + ": " + joinWithin(list, ", ", share-len(head)-len(": ; "))
		}
	}
	return lead + joinWithin(parts, "; ", maxEventNote-len(lead))
}

// joinWithin joins items with sep in at most limit bytes, ending with
// "and N more" when not all fit.
func joinWithin(items []string, sep string, limit int) string {
	var b strings.Builder
	for i, item := range items {
		s := ""
		if i > 0 {
			s = sep
		}
		more := fmt.Sprintf("%sand %d more", sep, len(items)-i)
		if i == len(items)-1 {
			more = ""
		}
		if b.Len()+len(s)+len(item)+len(more) > limit {
			fmt.Fprintf(&b, "%sand %d more", s, len(items)-i)
			return b.String()
		}
		b.WriteString(s + item)
	}
	return b.String()
}
