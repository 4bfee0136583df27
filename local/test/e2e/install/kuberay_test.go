package install_test

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// KubeRay's reference: the commit whose operator and chart the switch
// starts from, read from a bare mirror of its repository at test time
// (hack/kuberay-reference.sh builds the same commit for the benchmarks).
// Nothing of KubeRay is in this repository.
const (
	kuberayMirrorEnv     = "KUBERAY_MIRROR"
	kuberayDefaultMirror = "/work/.mirror/ray-project+kuberay/repo"
	kuberayCommit        = "feeaf72"
)

// kuberay is KubeRay's source tree at kuberayCommit, exported into a
// scratch directory: its operator's module and its chart.
type kuberay struct {
	mirror, revision, epoch string
	// operator is the ray-operator module directory, chart the
	// kuberay-operator chart's.
	operator, chart string
}

// exportKubeRay exports KubeRay's operator module and chart at
// kuberayCommit from the mirror into dir.
func exportKubeRay(ctx context.Context, dir string) (*kuberay, error) {
	k := &kuberay{
		mirror:   cmp.Or(os.Getenv(kuberayMirrorEnv), kuberayDefaultMirror),
		operator: filepath.Join(dir, "ray-operator"),
		chart:    filepath.Join(dir, "kuberay-operator"),
	}
	var err error
	if k.revision, err = git(ctx, k.mirror, "rev-parse", kuberayCommit+"^{commit}"); err != nil {
		return nil, fmt.Errorf("KubeRay's commit %s in %s (%s): %w", kuberayCommit, k.mirror, kuberayMirrorEnv, err)
	}
	if k.epoch, err = git(ctx, k.mirror, "log", "-1", "--format=%ct", k.revision); err != nil {
		return nil, err
	}
	// Only these trees: a snapshot mirror may lack blobs elsewhere.
	for tree, to := range map[string]string{"ray-operator": k.operator, "helm-chart/kuberay-operator": k.chart} {
		if err := os.MkdirAll(to, 0o755); err != nil {
			return nil, err
		}
		archive := exec.CommandContext(ctx, "sh", "-c", `git -C "$1" archive --format=tar "$2" | tar -x -C "$3"`, "sh", k.mirror, k.revision+":"+tree, to)
		if out, err := archive.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("exporting %s of KubeRay %s: %w\n%s", tree, kuberayCommit, err, out)
		}
	}
	return k, nil
}

// image is the image source of KubeRay's operator, built as its Dockerfile
// builds it: the binary at /manager, its chart's operatorCommand. Its
// go.mod asks for the Go release installed here: GOTOOLCHAIN=local keeps
// go from fetching another, -mod=mod lets it complete go.sum.
func (k *kuberay) image() imageSource {
	return imageSource{
		dir: k.operator, pkg: ".",
		version: kuberayCommit, revision: k.revision, source: "https://github.com/ray-project/kuberay", epoch: k.epoch,
		binaryPath: "/manager",
		env:        []string{"GOTOOLCHAIN=local", "GOFLAGS=-mod=mod"},
	}
}

// pushKubeRay exports KubeRay, builds its operator's image with hack/image
// and pushes it into the cluster's registry as kuberay-operator:<commit>.
func (s *suite) pushKubeRay(t *testing.T) (*kuberay, string) {
	t.Helper()
	dir, err := os.MkdirTemp(s.StateDir, "kuberay-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	k, err := exportKubeRay(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := s.images.buildAndPushSource(t.Context(), k.image(), s.kuberayRepository()+":"+kuberayCommit)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("KubeRay's image (%s): built (this platform) in %v, pushed in %v: %s", kuberayCommit,
		s.images.lastBuild.Round(time.Millisecond), s.images.lastPush.Round(time.Millisecond), ref)
	return k, ref
}

// kuberayRepository is KubeRay's image repository in the cluster's
// registry.
func (s *suite) kuberayRepository() string { return s.registry.String() + "/kuberay-operator" }
