package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// BenchmarkContainerTrue measures Start → Done of `echo` (conmon and runc
// create/start on the pod's base root in its user and network namespaces,
// then runc's and our cleanup), and reports Start → first output of `echo`
// (conmon's stamp in the log) as start-to-output-ms.
func BenchmarkContainerTrue(b *testing.B) {
	h := newTestHost(b, 10)
	ctx := b.Context()
	s, err := h.CreateSandbox(ctx, SandboxSpec{UID: "uid-bench", Namespace: "ns", Name: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	var toOutput time.Duration
	attempt := 0
	for b.Loop() {
		attempt++
		logPath := filepath.Join(b.TempDir(), "true.log")
		begin := time.Now()
		c, err := s.Start(ctx, ContainerSpec{Name: "true", Attempt: attempt, Args: []string{"echo", "up"}, Env: testEnv, LogPath: logPath})
		if err != nil {
			b.Fatal(err)
		}
		<-c.Done()
		if c.ExitCode() != 0 {
			b.Fatalf("exit %d", c.ExitCode())
		}
		toOutput += firstLogTime(b, logPath).Sub(begin)
	}
	b.ReportMetric(float64(toOutput.Milliseconds())/float64(attempt), "start-to-output-ms")
}

// BenchmarkSandboxCreateDestroy measures the host-side cost of one pod:
// directory, /etc files, /dev/shm, netns, veth, address and their removal.
func BenchmarkSandboxCreateDestroy(b *testing.B) {
	h := newTestHost(b, 11)
	ctx := b.Context()
	var create, destroy time.Duration
	i := 0
	for b.Loop() {
		i++
		begin := time.Now()
		s, err := h.CreateSandbox(ctx, SandboxSpec{UID: fmt.Sprintf("uid-%d", i), Namespace: "ns", Name: "p"})
		if err != nil {
			b.Fatal(err)
		}
		mid := time.Now()
		if err := s.Destroy(ctx); err != nil {
			b.Fatal(err)
		}
		create += mid.Sub(begin)
		destroy += time.Since(mid)
	}
	b.ReportMetric(float64(create.Microseconds())/float64(i)/1000, "create-ms")
	b.ReportMetric(float64(destroy.Microseconds())/float64(i)/1000, "destroy-ms")
}

// firstLogTime is the time conmon stamped on the first line of a CRI log.
func firstLogTime(b *testing.B, path string) time.Time {
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	stamp, _, _ := strings.Cut(string(data), " ")
	t, err := time.Parse(time.RFC3339Nano, stamp)
	if err != nil {
		b.Fatalf("log %s: %v", path, err)
	}
	return t
}
