package containerlog

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	clocktesting "k8s.io/utils/clock/testing"
)

// listDir is the names in dir, sorted.
func listDir(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	slices.Sort(names)
	return names
}

// reopenAt is a writer's reopen: a new empty file at path.
func reopenAt(path string) func() error {
	return func() error { return os.WriteFile(path, nil, 0o644) }
}

func TestRotateKeepsMaxFiles(t *testing.T) {
	dir := t.TempDir()
	path, err := Create(dir, "c", 0)
	if err != nil {
		t.Fatal(err)
	}
	r := Rotation{MaxSize: 10, MaxFiles: 3}
	now := t0
	for i := range 4 {
		if err := os.WriteFile(path, []byte(strings.Repeat("x", 9+i)), 0o644); err != nil {
			t.Fatal(err)
		}
		rotated, err := r.Rotate(path, now, reopenAt(path))
		if err != nil {
			t.Fatal(err)
		}
		if want := i > 0; rotated != want { // 9 bytes is under the size
			t.Errorf("write %d: rotated %v, want %v", i, rotated, want)
		}
		now = now.Add(time.Second)
	}
	want := []string{"0.log", "0.log.20261123-100002", "0.log.20261123-100003"}
	if diff := cmp.Diff(want, listDir(t, filepath.Dir(path))); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	if data, _ := os.ReadFile(path + ".20261123-100003"); len(data) != 12 {
		t.Errorf("the newest rotated file holds %d bytes, want the 12 written last", len(data))
	}
}

func TestRotateRenamesBackWhenTheWriterCannotReopen(t *testing.T) {
	path, err := Create(t.TempDir(), "c", 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("0123456789"), 0o644); err != nil {
		t.Fatal(err)
	}
	rotated, err := Rotation{MaxSize: 10, MaxFiles: 2}.Rotate(path, t0, func() error { return errors.New("no monitor") })
	if err == nil || rotated {
		t.Errorf("Rotate = %v, %v; want an error", rotated, err)
	}
	if diff := cmp.Diff([]string{"0.log"}, listDir(t, filepath.Dir(path))); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
}

func TestCreateKeepsOnlyThePreviousAttemptsLog(t *testing.T) {
	dir := t.TempDir()
	for attempt := range 4 {
		path, err := Create(dir, "c", attempt)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path+".20261123-100000", nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"2.log", "2.log.20261123-100000", "3.log", "3.log.20261123-100000"}
	if diff := cmp.Diff(want, listDir(t, filepath.Join(dir, "logs", "c"))); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
}

func TestReadLogFollowsIntoTheRotatedFile(t *testing.T) {
	dir, clk := t.TempDir(), clocktesting.NewFakeClock(t0)
	path, err := Create(dir, "c", 0)
	if err != nil {
		t.Fatal(err)
	}
	appendLog(t, path, "2026-11-23T10:00:00+00:00 stdout F before\n")
	ended := make(chan struct{})
	pr := newLineReader()
	errc := make(chan error, 1)
	go func() { errc <- Read(t.Context(), path, Options{Tail: -1, Follow: true}, ended, clk, pr) }()
	if got := pr.next(t); got != "before\n" {
		t.Fatalf("first read %q", got)
	}
	if _, err := (Rotation{MaxSize: 1, MaxFiles: 2}).Rotate(path, t0, reopenAt(path)); err != nil {
		t.Fatal(err)
	}
	appendLog(t, path, "2026-11-23T10:00:01+00:00 stdout F after\n")
	for got := ""; got != "after\n"; {
		clk.Step(100 * time.Millisecond)
		got = pr.poll()
	}
	close(ended)
	clk.Step(100 * time.Millisecond)
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
}
