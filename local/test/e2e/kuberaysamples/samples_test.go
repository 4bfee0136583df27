package kuberaysamples_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/ray-operator/ray-operator/local/internal/e2eutil"
)

// kuberayModule is KubeRay's operator module, whose zip holds its samples.
const kuberayModule = "github.com/ray-project/kuberay/ray-operator"

// downloadSamples downloads KubeRay's operator module at version into the
// Go module cache (`go mod download`, from the module proxy as any Go
// module; outside the clone, read-only) and returns its samples directory.
func downloadSamples(ctx context.Context, version string) (string, error) {
	cmd := exec.CommandContext(ctx, "go", "mod", "download", "-json", kuberayModule+"@"+version)
	// Outside any module, so that nothing here is read or changed.
	cmd.Dir = os.TempDir()
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=")
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go mod download %s@%s: %w\n%s", kuberayModule, version, err, out)
	}
	var mod struct{ Dir, Error string }
	if err := json.Unmarshal(out, &mod); err != nil {
		return "", fmt.Errorf("go mod download %s@%s: %w", kuberayModule, version, err)
	}
	if mod.Error != "" {
		return "", fmt.Errorf("go mod download %s@%s: %s", kuberayModule, version, mod.Error)
	}
	return filepath.Join(mod.Dir, "config", "samples"), nil
}

// How a sample is checked.
type mode int

const (
	// skip: the sample needs what this machine cannot give (reason).
	skip mode = iota
	// cluster: a RayCluster (and the objects beside it) must be ready
	// and run a job on every Pod.
	cluster
	// redis: as cluster, and a detached actor survives the head Pod's
	// deletion (GCS fault tolerance with the sample's Redis).
	redis
	// autoscale: as cluster, then the sample's own scripts, as KubeRay's
	// autoscaling guide runs them: a detached actor brings a worker, and
	// once it is killed the idle worker goes.
	autoscale
	// job: a RayJob must reach SUCCEEDED.
	job
	// interactive: a RayJob in InteractiveMode, whose job the user
	// submits with the ID the operator chose, must reach SUCCEEDED.
	interactive
)

// plan says how a sample is checked; reason says why it is skipped. A
// long sample starts first, so that the others run beside it.
type plan struct {
	mode   mode
	reason string
	long   bool
}

// Reasons to skip, by what the sample needs.
const (
	needsTPU       = "needs Google Cloud TPUs (GKE node selectors and resources)"
	needsGPU       = "needs NVIDIA GPUs"
	needsVolcano   = "needs the Volcano batch scheduler (its Queue CRD and the operator's --batch-scheduler=volcano), which the local cluster does not run"
	needsYuniKorn  = "needs the YuniKorn batch scheduler (the operator's --batch-scheduler=yunikorn), which the local cluster does not run"
	needsKAI       = "needs NVIDIA's KAI scheduler (its Queue CRD and the operator's --batch-scheduler=kai-scheduler), which the local cluster does not run"
	noLocalImageOf = "its image %s has no local equivalent (the local node runs Ray and Redis images only; docs/local.md)"
	noFluentBit    = "its image fluent/fluent-bit:3.2.2 is Docker Hub's, which this machine does not reach; a user with the image loads it first: `docker save fluent/fluent-bit:3.2.2 -o fluent-bit.tar` where Docker has it, then `make load-image ARCHIVE=fluent-bit.tar` (docs/local.md, Images from an archive)"
)

// plans is every RayCluster and RayJob sample of the KubeRay release the
// suite runs (v1.5.0), by file name. A sample of another release missing
// here fails the suite: decide whether it runs, and why not.
var plans = map[string]plan{
	"ray-cluster.auth.yaml":                    {reason: fmt.Sprintf(noLocalImageOf, "quay.io/brancz/kube-rbac-proxy")},
	"ray-cluster.autoscaler-v2.yaml":           {mode: autoscale},
	"ray-cluster.autoscaler.yaml":              {mode: autoscale},
	"ray-cluster.complete.yaml":                {mode: cluster},
	"ray-cluster.custom-head-service.yaml":     {mode: cluster},
	"ray-cluster.deprecate-gcs-ft.yaml":        {mode: redis},
	"ray-cluster.embed-grafana.yaml":           {mode: cluster},
	"ray-cluster.external-redis-uri.yaml":      {mode: redis},
	"ray-cluster.external-redis.yaml":          {mode: redis},
	"ray-cluster.fluentbit.yaml":               {reason: noFluentBit},
	"ray-cluster.gke-bucket.yaml":              {reason: "needs a Google Cloud Storage bucket and GKE's workload identity"},
	"ray-cluster.head-command.yaml":            {mode: cluster},
	"ray-cluster.kai-gpu-sharing.yaml":         {reason: needsKAI + "; " + needsGPU},
	"ray-cluster.kai-scheduler.yaml":           {reason: needsKAI},
	"ray-cluster.overwrite-command.yaml":       {mode: cluster},
	"ray-cluster.persistent-redis.yaml":        {mode: redis},
	"ray-cluster.py-spy.yaml":                  {mode: cluster},
	"ray-cluster.sample.yaml":                  {mode: cluster},
	"ray-cluster.scheduler-plugins.yaml":       {mode: cluster},
	"ray-cluster.separate-ingress.yaml":        {mode: cluster},
	"ray-cluster.tls.yaml":                     {mode: cluster},
	"ray-cluster.tpu-v4-multihost.yaml":        {reason: needsTPU},
	"ray-cluster.tpu-v4-singlehost.yaml":       {reason: needsTPU},
	"ray-cluster.tpu-v6e-16-multihost.yaml":    {reason: needsTPU},
	"ray-cluster.tpu-v6e-256-multihost.yaml":   {reason: needsTPU},
	"ray-cluster.tpu-v6e-singlehost.yaml":      {reason: needsTPU},
	"ray-cluster.uv.yaml":                      {mode: cluster},
	"ray-cluster.verl.yaml":                    {reason: needsGPU + "; " + fmt.Sprintf(noLocalImageOf, "hiyouga/verl")},
	"ray-cluster.volcano-scheduler-queue.yaml": {reason: needsVolcano},
	"ray-cluster.volcano-scheduler.yaml":       {reason: needsVolcano},
	"ray-cluster.yunikorn-scheduler.yaml":      {reason: needsYuniKorn},
	"ray-job.batch-inference.yaml":             {reason: needsGPU + "; downloads a model from Hugging Face and images from S3"},
	"ray-job.custom-head-svc.yaml":             {mode: job},
	"ray-job.deletion-rules.yaml":              {mode: job},
	"ray-job.interactive-mode.yaml":            {mode: interactive},
	"ray-job.kueue-toy-sample.yaml":            {mode: job, long: true}, // prints the cluster's resources once a second, 600 times
	"ray-job.light-weight-submitter.yaml":      {reason: fmt.Sprintf(noLocalImageOf, "kuberay/submitter")},
	"ray-job.modin.yaml":                       {reason: "reads a dataset from https://modin-datasets.intel.com, which this machine cannot resolve (it ran here: modin installed from PyPI, then the download failed)"},
	"ray-job.resources.yaml":                   {mode: job},
	"ray-job.sample.yaml":                      {mode: job},
	"ray-job.shutdown.yaml":                    {mode: job},
	"ray-job.sidecar-mode.yaml":                {mode: job},
	"ray-job.tpu-v6e-16-multihost.yaml":        {reason: needsTPU},
	"ray-job.tpu-v6e-256-multihost.yaml":       {reason: needsTPU},
	"ray-job.tpu-v6e-singlehost.yaml":          {reason: needsTPU},
	"ray-job.use-existing-raycluster.yaml":     {reason: "its clusterSelector names RayCluster ray-cluster-kuberay, which no sample creates (ray-cluster.sample.yaml's is raycluster-kuberay)"},
	"ray-job.volcano-scheduler-queue.yaml":     {reason: needsVolcano},
	"ray-job.yunikorn-scheduler.yaml":          {reason: needsYuniKorn},
}

// runners check a sample by its mode, once applied into ns; they return
// what the result's time measures and how long it took.
var runners = map[mode]func(s *suite, t *testing.T, ns string, objs sampleObjects) (string, time.Duration){
	cluster:     (*suite).checkCluster,
	redis:       (*suite).checkRedis,
	autoscale:   (*suite).checkAutoscale,
	job:         (*suite).checkJob,
	interactive: (*suite).checkInteractive,
}

// TestKubeRaySamples runs or skips each of KubeRay's RayCluster and RayJob
// samples by plans, each in a namespace of its own; as many at once as go
// test's -parallel (`make test-kuberay-samples` passes
// KUBERAY_SAMPLES_PARALLEL; 1 runs them one at a time), the long ones
// first.
func TestKubeRaySamples(t *testing.T) {
	files, err := sampleFiles(shared.samples)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no ray-cluster.*.yaml or ray-job.*.yaml in %s", shared.samples)
	}
	slices.SortStableFunc(files, func(a, b string) int {
		return cmpBool(plans[b].long, plans[a].long)
	})
	for _, file := range files {
		t.Run(file, func(t *testing.T) {
			t.Parallel()
			shared.runSample(t, file)
		})
	}
}

// cmpBool orders false before true.
func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// sampleFiles lists the RayCluster and RayJob samples of dir.
func sampleFiles(dir string) ([]string, error) {
	var files []string
	for _, pattern := range []string{"ray-cluster.*.yaml", "ray-job.*.yaml"} {
		matches, err := filepath.Glob(filepath.Join(dir, pattern))
		if err != nil {
			return nil, err
		}
		for _, m := range matches {
			files = append(files, filepath.Base(m))
		}
	}
	slices.Sort(files)
	return files, nil
}

// runSample applies file unchanged into a new namespace and checks it by
// its plan, recording the outcome.
func (s *suite) runSample(t *testing.T, file string) {
	p, ok := plans[file]
	if !ok {
		s.record(result{file: file, outcome: "fail", note: "not in the plans table"})
		t.Fatalf("%s of KubeRay %s is not in the plans table: say whether it runs here, or why not", file, s.version)
	}
	if p.mode == skip {
		s.record(result{file: file, outcome: "skip", note: p.reason})
		t.Skip(p.reason)
	}
	ns := e2eutil.Namespace(t, s.Client, func(ctx context.Context, ns string) { s.Dump(ctx, t, ns) })
	r := result{file: file, outcome: "fail"}
	began := time.Now()
	defer func() {
		if r.outcome == "fail" {
			r.took, r.note = time.Since(began), "failed: see the test's log"
		}
		s.record(r)
	}()
	objs := s.apply(t, ns, file)
	r.measured, r.took = runners[p.mode](s, t, ns, objs)
	r.outcome = "pass"
}
