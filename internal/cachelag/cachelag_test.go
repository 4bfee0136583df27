package cachelag

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

func job(uid, version string) *rayv1.RayJob {
	return &rayv1.RayJob{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "job", UID: types.UID(uid), ResourceVersion: version}}
}

func TestBehind(t *testing.T) {
	cases := map[string]struct {
		writes [][2]string // version read, version answered
		cached *rayv1.RayJob
		want   bool
	}{
		"nothing written":                      {cached: job("u", "10"), want: false},
		"cache shows the version written from": {writes: [][2]string{{"10", "12"}}, cached: job("u", "10"), want: true},
		"cache shows the answer":               {writes: [][2]string{{"10", "12"}}, cached: job("u", "12"), want: false},
		"cache shows a later version":          {writes: [][2]string{{"10", "12"}}, cached: job("u", "15"), want: false},
		"two writes in one pass, cache shows the first answer": {
			writes: [][2]string{{"10", "12"}, {"12", "14"}}, cached: job("u", "12"), want: true,
		},
		"two writes in one pass, cache shows the second answer": {
			writes: [][2]string{{"10", "12"}, {"12", "14"}}, cached: job("u", "14"), want: false,
		},
		"a new object of the same name": {writes: [][2]string{{"10", "12"}}, cached: job("v", "10"), want: false},
		"a write that changed nothing":  {writes: [][2]string{{"10", "10"}}, cached: job("u", "10"), want: false},
		"a write from no version":       {writes: [][2]string{{"", "12"}}, cached: job("u", "12"), want: false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var w OwnWrites
			for _, wr := range tc.writes {
				w.Wrote(job("u", wr[1]), wr[0])
			}
			if got := w.Behind(tc.cached); got != tc.want {
				t.Fatalf("Behind(version %s) = %v, want %v", tc.cached.ResourceVersion, got, tc.want)
			}
		})
	}
}

func TestRecordDroppedOnceCaughtUp(t *testing.T) {
	var w OwnWrites
	w.Wrote(job("u", "12"), "10")
	if !w.Behind(job("u", "10")) {
		t.Fatal("version 10 was replaced but is not reported behind")
	}
	if w.Len() != 1 {
		t.Fatalf("records = %d while behind, want 1", w.Len())
	}
	if w.Behind(job("u", "12")) {
		t.Fatal("the answer's version is reported behind")
	}
	if w.Len() != 0 {
		t.Fatalf("records = %d after the cache caught up, want 0", w.Len())
	}
	w.Wrote(job("u", "14"), "12")
	w.Forget(types.NamespacedName{Namespace: "ns", Name: "job"})
	if w.Len() != 0 || w.Behind(job("u", "12")) {
		t.Fatal("a forgotten object is still recorded")
	}
}
