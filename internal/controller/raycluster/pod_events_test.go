package raycluster

import (
	"fmt"
	"strings"
	"testing"
)

func TestPodChangeNote(t *testing.T) {
	create := podChange{reason: reasonCreatedWorkerPod, action: actionCreate, role: "worker", group: "small"}
	del := podChange{reason: reasonDeletedWorkerPod, action: actionDelete, role: "worker", group: "small", why: "scaling down"}
	for _, tc := range []struct {
		c    podChange
		pods []string
		want string
	}{
		{create, []string{"a"}, "Created worker Pod ns/a"},
		{del, []string{"a"}, "Deleted worker Pod ns/a: scaling down"},
		{create, []string{"a", "b", "c"}, "Created 3 worker Pods of group small in ns: a, b, c"},
		{del, []string{"a", "b"}, "Deleted 2 worker Pods of group small in ns (scaling down): a, b"},
	} {
		if got := podChangeNote(tc.c, "ns", tc.pods); got != tc.want {
			t.Errorf("podChangeNote(%v, %v) = %q, want %q", tc.c, tc.pods, got, tc.want)
		}
	}
}

// TestPodChangeNoteFitsTheAPILimit: 500 Pods of 63-character names (the
// most one pass creates) give a note within the API server's 1 KiB that
// names as many as fit and counts the rest.
func TestPodChangeNoteFitsTheAPILimit(t *testing.T) {
	pods := make([]string, 500)
	for i := range pods {
		pods[i] = fmt.Sprintf("%s-%05d", strings.Repeat("x", 57), i)
	}
	c := podChange{reason: reasonCreatedWorkerPod, action: actionCreate, role: "worker", group: "g"}
	note := podChangeNote(c, "ns", pods)
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

func TestNameList(t *testing.T) {
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
		if got := nameList(tc.names, tc.limit); got != tc.want {
			t.Errorf("nameList(%v, %d) = %q, want %q", tc.names, tc.limit, got, tc.want)
		}
	}
}
