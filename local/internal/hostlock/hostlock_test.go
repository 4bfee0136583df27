package hostlock

import (
	"bufio"
	"context"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

func TestAcquireWaitsForAnotherProcess(t *testing.T) {
	path := filepath.Join(t.TempDir(), "node.lock")
	// flock(1) takes the lock, says so, and holds it until its stdin closes.
	holder := exec.Command("flock", path, "sh", "-c", "echo held; cat")
	stdin, err := holder.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := holder.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := holder.Start(); err != nil {
		t.Fatalf("flock(1) (util-linux): %v", err)
	}
	if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || line != "held\n" {
		t.Fatalf("flock(1) said %q, %v", line, err)
	}
	waiting := make(chan struct{})
	acquired := make(chan *Lock, 1)
	go func() {
		l, err := Acquire(context.Background(), path, func() { close(waiting) })
		if err != nil {
			t.Error(err)
		}
		acquired <- l
	}()
	<-waiting
	if Held() {
		t.Fatal("Held() = true while another process holds the lock")
	}
	_ = stdin.Close()
	if err := holder.Wait(); err != nil {
		t.Fatal(err)
	}
	l := <-acquired
	if !Held() {
		t.Fatal("Held() = false after Acquire returned")
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	if err := l.Release(); err != nil || Held() {
		t.Fatalf("second Release = %v, Held() = %v; want nil, false", err, Held())
	}
}

func TestAcquireGivesUpWithTheContext(t *testing.T) {
	path := filepath.Join(t.TempDir(), "node.lock")
	first, err := Acquire(context.Background(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = first.Release() }()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	// A second open file description in the same process conflicts too.
	if l, err := Acquire(ctx, path, nil); err == nil {
		_ = l.Release()
		t.Fatal("a second Acquire of a held lock succeeded")
	}
}
