package sandbox

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// writeTree writes files (path relative to root: content) under root.
func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for rel, content := range files {
		path := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCgroupUsage reads a fake cgroup v1 tree: the working set is usage
// less total_inactive_file (never negative), not inactive_file, which
// covers the cgroup alone.
func TestCgroupUsage(t *testing.T) {
	tests := map[string]struct {
		usage, stat string
		want        Usage
		wantErr     bool
	}{
		"working set": {
			usage: "10000000\n",
			stat:  "cache 1\nrss 2\ninactive_file 5\ntotal_rss 4000000\ntotal_inactive_file 3000000\n",
			want:  Usage{RSSBytes: 4000000, MemoryBytes: 10000000, WorkingSetBytes: 7000000, CPU: 1500 * time.Millisecond},
		},
		"inactive above usage": {
			usage: "100\n",
			stat:  "total_rss 50\ntotal_inactive_file 300\n",
			want:  Usage{RSSBytes: 50, MemoryBytes: 100, CPU: 1500 * time.Millisecond},
		},
		"no inactive_file": {usage: "100\n", stat: "total_rss 50\n", wantErr: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			writeTree(t, root, map[string]string{
				"memory/rayop-x/c1/memory.usage_in_bytes": tc.usage,
				"memory/rayop-x/c1/memory.stat":           tc.stat,
				"cpuacct/rayop-x/c1/cpuacct.usage":        "1500000000\n",
			})
			got, err := cgroupUsage(root, "rayop-x/c1")
			if (err != nil) != tc.wantErr {
				t.Fatalf("cgroupUsage() error = %v, want error %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("cgroupUsage() (-want +got):\n%s", diff)
			}
		})
	}
}

// TestReadMachineUsage reads a fake /proc: busy CPU is user, nice, system,
// irq, softirq and steal; memory is MemTotal less MemFree.
func TestReadMachineUsage(t *testing.T) {
	proc := t.TempDir()
	writeTree(t, proc, map[string]string{
		"stat":    "cpu  100 20 30 5000 400 6 7 8 9 10\ncpu0 50 10 15 2500 200 3 3 4 0 0\nintr 1 2\nbtime 1700000000\n",
		"meminfo": "MemTotal:       1000 kB\nMemFree:         400 kB\nMemAvailable:    800 kB\nInactive(file):  100 kB\n",
	})
	got, err := ReadMachineUsage(proc)
	if err != nil {
		t.Fatal(err)
	}
	want := MachineUsage{
		Usage:    Usage{MemoryBytes: 600 << 10, WorkingSetBytes: 500 << 10, CPU: 1710 * time.Millisecond},
		BootTime: time.Unix(1700000000, 0),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ReadMachineUsage() (-want +got):\n%s", diff)
	}
	writeTree(t, proc, map[string]string{"stat": "cpu0 1 2 3 4 5 6 7 8\n"})
	if _, err := ReadMachineUsage(proc); err == nil {
		t.Error("ReadMachineUsage() of a stat without a cpu line succeeded")
	}
}
