package containerlog

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"testing"

	clocktesting "k8s.io/utils/clock/testing"
)

// writeLargeLog writes lines stdout records of about 100 bytes each and
// returns the file's path.
func writeLargeLog(t *testing.T, lines int) string {
	t.Helper()
	path, err := Create(t.TempDir(), "c", 0)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	for i := range lines {
		fmt.Fprintf(w, "2026-11-23T10:00:00.000000000+00:00 stdout F line %08d %s\n", i, "0123456789012345678901234567890123456789")
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// allocatedBy is how many bytes f allocates on the heap.
func allocatedBy(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// A tail or a byte limit reads from where it needs to, never the whole
// file into memory: a 30 MB log costs well under 1 MB to serve either.
func TestReadLogDoesNotLoadTheWholeFile(t *testing.T) {
	path := writeLargeLog(t, 300_000)
	clk := clocktesting.NewFakeClock(t0)
	cases := map[string]struct {
		opts Options
		want string
	}{
		"tail 2":        {Options{Tail: 2}, "line 00299998 0123456789012345678901234567890123456789\nline 00299999 0123456789012345678901234567890123456789\n"},
		"limitBytes 10": {Options{Tail: -1, LimitBytes: 10}, "line 00000"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got []byte
			alloc := allocatedBy(func() {
				pr, pw := io.Pipe()
				go func() { pw.CloseWithError(Read(t.Context(), path, tc.opts, ended(), clk, pw)) }()
				var err error
				if got, err = io.ReadAll(pr); err != nil {
					t.Error(err)
				}
			})
			if string(got) != tc.want {
				t.Errorf("read %q, want %q", got, tc.want)
			}
			if alloc > 1<<20 {
				t.Errorf("serving it allocated %d bytes; want under 1 MiB for a %d-byte file", alloc, fileSize(t, path))
			}
		})
	}
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}

// A tail across the backward reader's chunks: a record longer than a chunk,
// and an incomplete last record (being written), which a tail leaves out.
func TestReadLogTailAcrossChunks(t *testing.T) {
	dir, clk := t.TempDir(), clocktesting.NewFakeClock(t0)
	path, err := Create(dir, "c", 0)
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("x", 3*tailChunk)
	appendLog(t, path, "2026-11-23T10:00:00+00:00 stdout F first\n2026-11-23T10:00:01+00:00 stdout F "+long+"\n"+
		"2026-11-23T10:00:02+00:00 stdout P half \n2026-11-23T10:00:02+00:00 stdout F whole\n2026-11-23T10:00:03+00:00 stdout F incompl")
	for tail, want := range map[int]string{0: "", 1: "half whole\n", 2: long + "\nhalf whole\n", 5: "first\n" + long + "\nhalf whole\n"} {
		var b strings.Builder
		if err := Read(t.Context(), path, Options{Tail: tail}, ended(), clk, &b); err != nil {
			t.Fatal(err)
		}
		if b.String() != want {
			t.Errorf("tail %d: got %d bytes %.40q, want %d bytes %.40q", tail, b.Len(), b.String(), len(want), want)
		}
	}
}
