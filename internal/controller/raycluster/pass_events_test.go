package raycluster

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
)

func TestChangeNote(t *testing.T) {
	create := childChange{reason: reasonCreatedWorkerPod, action: actionCreate, noun: "worker Pod", group: "small"}
	del := childChange{reason: reasonDeletedWorkerPod, action: actionDelete, noun: "worker Pod", group: "small", why: "scaling down"}
	service := childChange{reason: reasonCreatedService, action: actionCreate, noun: "service"}
	for _, tc := range []struct {
		c    childChange
		pods []string
		want string
	}{
		{create, []string{"a"}, "Created worker Pod ns/a"},
		{del, []string{"a"}, "Deleted worker Pod ns/a: scaling down"},
		{create, []string{"a", "b", "c"}, "Created 3 worker Pods of group small in ns: a, b, c"},
		{del, []string{"a", "b"}, "Deleted 2 worker Pods of group small in ns (scaling down): a, b"},
		{service, []string{"s"}, "Created service ns/s"},
		{service, []string{"s", "r"}, "Created 2 services in ns: r, s"},
	} {
		if got := changeNote(tc.c, "ns", tc.pods); got != tc.want {
			t.Errorf("changeNote(%v, %v) = %q, want %q", tc.c, tc.pods, got, tc.want)
		}
	}
}

// TestPodChangeNoteFitsTheAPILimit: 500 Pods of 63-character names (the
// most one pass creates) give a note within the API server's 1 KiB that
// names as many as fit and counts the rest.
func TestChangeNoteFitsTheAPILimit(t *testing.T) {
	pods := make([]string, 500)
	for i := range pods {
		pods[i] = fmt.Sprintf("%s-%05d", strings.Repeat("x", 57), i)
	}
	c := childChange{reason: reasonCreatedWorkerPod, action: actionCreate, noun: "worker Pod", group: "g"}
	note := changeNote(c, "ns", pods)
	if len(note) > maxEventNote {
		t.Fatalf("note of %d bytes, over %d", len(note), maxEventNote)
	}
	named := strings.Count(note, strings.Repeat("x", 57))
	if named < 10 || !strings.HasSuffix(note, fmt.Sprintf(", and %d more", 500-named)) {
		t.Errorf("note names %d Pods and ends %q", named, note[len(note)-40:])
	}
	if !strings.HasPrefix(note, "Created 500 worker Pods of group g in ns: "+pods[0]+", "+pods[1]) {
		t.Errorf("note starts %q", note[:80])
	}
}

func TestPassCreationNote(t *testing.T) {
	svc := childChange{reason: reasonCreatedService, action: actionCreate, noun: "service"}
	head := childChange{reason: reasonCreatedHeadPod, action: actionCreate, noun: "head Pod"}
	small := childChange{reason: reasonCreatedWorkerPod, action: actionCreate, noun: "worker Pod", group: "small"}
	names := map[childChange][]string{svc: {"rc-head-svc"}, head: {"rc-head-x"}, small: {"w-c", "w-a", "w-b"}}
	got := passCreationNote([]childChange{svc, head, small}, "ns", names)
	want := "Created in ns: service rc-head-svc; head Pod rc-head-x; 3 worker Pods of group small: w-a, w-b, w-c"
	if got != want {
		t.Errorf("passCreationNote = %q, want %q", got, want)
	}
}

// TestPassCreationNoteFitsTheAPILimit: a pass that creates Pods in 300
// one-Pod groups of long names, and one of 500 Pods, still gives a note
// within 1 KiB that says how many kinds it left out.
func TestPassCreationNoteFitsTheAPILimit(t *testing.T) {
	long := strings.Repeat("g", 63)
	names := map[childChange][]string{}
	var created []childChange
	for i := range 300 {
		c := childChange{reason: reasonCreatedWorkerPod, action: actionCreate, noun: "worker Pod", group: fmt.Sprintf("%s-%d", long[:58], i)}
		created = append(created, c)
		names[c] = []string{long + "-worker-abcde"}
	}
	big := childChange{reason: reasonCreatedWorkerPod, action: actionCreate, noun: "worker Pod", group: "big"}
	created = append([]childChange{big}, created...)
	for i := range 500 {
		names[big] = append(names[big], fmt.Sprintf("big-%03d", i))
	}
	note := passCreationNote(created, "ns", names)
	if len(note) > maxEventNote {
		t.Fatalf("note of %d bytes, over %d: %q", len(note), maxEventNote, note)
	}
	if !strings.HasPrefix(note, "Created in ns: 500 worker Pods of group big: big-000, big-001") || !regexp.MustCompile(`; and \d+ more$`).MatchString(note) {
		t.Errorf("note = %q", note)
	}
}

func TestJoinWithin(t *testing.T) {
	for _, tc := range []struct {
		names []string
		limit int
		want  string
	}{
		{[]string{"a", "b"}, 100, "a, b"},
		{[]string{"aaaa", "bbbb", "cccc"}, 20, "aaaa, and 2 more"},
		{[]string{"aaaa", "bbbb", "cccc"}, 22, "aaaa, bbbb, cccc"},
		{[]string{"aaaa"}, 2, "and 1 more"},
	} {
		if got := joinWithin(tc.names, ", ", tc.limit); got != tc.want {
			t.Errorf("joinWithin(%v, \", \", %d) = %q, want %q", tc.names, tc.limit, got, tc.want)
		}
	}
}
