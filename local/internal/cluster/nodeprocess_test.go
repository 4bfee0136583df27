package cluster

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ray-operator/ray-operator/local/internal/node"
)

func TestMain(m *testing.M) {
	RunNodeIfChild()
	os.Exit(m.Run())
}

// TestNodeProcessFailureIsReported: a node process that ends before its
// Node is Ready (here: it has no API server; without root or the pod
// network it fails even before) fails the start with its exit and the end
// of its log, which is kept in the state directory.
func TestNodeProcessFailureIsReported(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cfg := nodeProcessConfig{Settings: node.Settings{NodeName: "n"}, Kubeconfig: filepath.Join(dir, "missing-kubeconfig"), HostStateDir: filepath.Join(dir, "node")}
	_, err := startNodeProcess(ctx, dir, cfg, nil)
	if err == nil {
		t.Fatal("startNodeProcess succeeded without an API server")
	}
	if !strings.Contains(err.Error(), "the node process exited (exit status 1)") || !strings.Contains(err.Error(), "Node process failed") {
		t.Errorf("error %q: want the exit and the log's last lines", err)
	}
	data, readErr := os.ReadFile(filepath.Join(dir, "node.log"))
	if readErr != nil || !strings.Contains(string(data), "Node process failed") {
		t.Errorf("node.log: %q (%v)", data, readErr)
	}
}
