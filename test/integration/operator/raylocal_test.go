package operator_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-logr/logr"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/ray-operator/ray-operator/internal/testing/installcheck"
	"github.com/ray-operator/ray-operator/internal/testing/testenv"
)

// TestRayLocalWithKubeconfig runs ray-local the way `make run` does when a
// kubeconfig is present: it must install the CRDs into that cluster, run the
// operator against it and exit cleanly on SIGTERM.
func TestRayLocalWithKubeconfig(t *testing.T) {
	ctrllog.SetLogger(logr.Discard())
	binary := filepath.Join(t.TempDir(), "ray-local")
	// ray-local is the local module's (local/go.mod): build it there.
	build := exec.CommandContext(t.Context(), "go", "build", "-o", binary, "./cmd/ray-local")
	build.Dir = filepath.Join(installcheck.ModuleRoot(t), "local")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	env := testenv.Start(t, testenv.WithCRDDirs()) // a cluster without our CRDs
	kubeconfig := writeKubeconfig(t, env.Kubeconfig)

	op := &operatorProcess{output: &bytes.Buffer{}, metricsAddr: testenv.FreeAddr(t), probeAddr: testenv.FreeAddr(t)}
	op.cmd = exec.Command(binary, "--metrics-addr="+op.metricsAddr, "--health-probe-bind-address="+op.probeAddr)
	op.cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig, "HOME="+t.TempDir())
	op.cmd.Stdout, op.cmd.Stderr = op.output, op.output
	op.started = time.Now()
	if err := op.cmd.Start(); err != nil {
		t.Fatalf("starting ray-local: %v", err)
	}
	t.Cleanup(func() {
		if op.cmd.ProcessState == nil {
			_ = op.cmd.Process.Kill()
			_ = op.cmd.Wait()
		}
		if t.Failed() {
			t.Logf("ray-local output:\n%s", op.output)
		}
	})

	t.Logf("ray-local start to ready against an existing cluster: %v", waitReady(t, op))
	for _, name := range []string{"rayclusters.ray.io", "rayjobs.ray.io", "rayservices.ray.io", "raycronjobs.ray.io"} {
		var crd apiextensionsv1.CustomResourceDefinition
		if err := env.Client.Get(t.Context(), client.ObjectKey{Name: name}, &crd); err != nil {
			t.Errorf("CRD %s not installed: %v", name, err)
		}
	}
	stopOperator(t, op)
	for _, addr := range []string{op.metricsAddr, op.probeAddr} {
		assertNotListening(t, addr)
	}
}
