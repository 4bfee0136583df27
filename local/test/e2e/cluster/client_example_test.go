package cluster_test

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// TestTypedClientExample runs examples/client, the typed client's example
// program (docs/client.md), against the local cluster: it applies its RayJob
// through the generated clientset, the operator runs it with real Ray, and
// the program, following it with a generated informer, exits 0 having seen
// it succeed (SUCCEEDED is what Ray's job API reported to the operator).
func TestTypedClientExample(t *testing.T) {
	ns := shared.namespace(t)
	binary := filepath.Join(t.TempDir(), "client-example")
	build := exec.CommandContext(t.Context(), "go", "build", "-o", binary, "./examples/client")
	build.Dir = shared.Root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}

	run := exec.CommandContext(t.Context(), binary, "--kubeconfig", shared.Cluster.KubeconfigPath(),
		"--namespace", ns, "--name", "hello", "--timeout", rayJobTimeout.String())
	out, err := run.CombinedOutput()
	if err != nil {
		t.Fatalf("the example failed: %v\n%s", err, out)
	}
	want := "applied RayJob " + ns + "/hello (generation 1)\nRayJob hello: SUCCEEDED (Complete)\n"
	if string(out) != want {
		t.Errorf("output:\n%s\nwant:\n%s", out, want)
	}
}
