package netpolicy

import (
	"os"
	"path/filepath"
	"testing"
)

// TestQueueBound reads the kernel's list of bound nfqueues: queue number
// first, then peer port id, queue total, copy mode, copy range, dropped
// counts, id sequence and 1.
func TestQueueBound(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nfnetlink_queue")
	data := "  100  12345     0 2   128     0     0       17  1\n 2470 -4026     3 2   128     0     0      402  1\n"
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	for queue, want := range map[uint16]bool{100: true, 2470: true, 247: false, 12345: false} {
		got, err := queueBound(path, queue)
		if err != nil || got != want {
			t.Errorf("queueBound(%d) = %v, %v; want %v", queue, got, err, want)
		}
	}
	if _, err := queueBound(filepath.Join(t.TempDir(), "missing"), 100); err == nil {
		t.Error("queueBound of a missing file: no error")
	}
}

func TestDefaults(t *testing.T) {
	got := withDefaults(Config{})
	if got.QueueID != DefaultQueueID || got.Table != DefaultTable || got.upstreamTable() != DefaultTable+"-knp" {
		t.Errorf("defaults: queue %d, table %q, upstream table %q", got.QueueID, got.Table, got.upstreamTable())
	}
	set := withDefaults(Config{QueueID: 7, Table: "t"})
	if set.QueueID != 7 || set.Table != "t" {
		t.Errorf("set values overridden: %+v", set)
	}
}
