package install_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ray-operator/ray-operator/internal/testing/helmchart"
	"github.com/ray-operator/ray-operator/local/internal/e2eutil"
)

// The two versions the suite builds from this source: the one installed,
// and the one `helm upgrade` moves to.
const (
	versionOne = "v0.0.0-install.1"
	versionTwo = "v0.0.0-install.2"
)

// Bounds of the steps, on a loaded 2-core machine.
const (
	// helmTimeout is helm's --timeout for --wait: the image pull and the
	// operator's start (its webhook certificate reaches the mounted
	// Secret within a volume resync).
	helmTimeout = 4 * time.Minute
	// rayTimeout bounds a RayJob or a RayService from create to done or
	// serving: a head starts in about 15 s on an idle machine.
	rayTimeout = 6 * time.Minute
)

// run is what the steps of the test share: the release's values, the
// RayService that serves throughout, and its request loop.
type run struct {
	release helmchart.Release
	// serviceNS holds the hello RayService, which serves from the first
	// step to the last; url is its serve Service's.
	serviceNS, url string
	loop           *e2eutil.RequestLoop
	loopStarted    time.Time
}

// TestHelmInstallUpgradeFailoverUninstall runs the operator as users of
// KubeRay's chart run it, step after step on one release; a step that
// fails ends the test, since the next ones build on it.
func TestHelmInstallUpgradeFailoverUninstall(t *testing.T) {
	shared.auditFrom = time.Now()
	r := &run{release: helmchart.Release{
		Name:      helmchart.ReleaseName,
		Namespace: helmchart.ReleaseNamespace,
		Set: []string{
			"image.repository=" + shared.repository(),
			"image.tag=" + versionOne,
			"webhook.enabled=true",
		},
	}}
	t.Cleanup(func() {
		if r.loop != nil {
			r.loop.Finish()
		}
	})
	steps := []struct {
		name string
		run  func(*testing.T, *run)
	}{
		{"helm install: the operator Pod Ready under the chart's ServiceAccount", testInstall},
		{"a RayJob in K8sJobMode succeeds, written by the ServiceAccount", testRayJob},
		{"the chart's webhook refuses an invalid RayCluster", testWebhook},
		{"helm upgrade while a RayService serves and a RayJob runs", testUpgrade},
		{"two replicas: the leader's Pod deleted while the RayService serves", testFailover},
		{"helm uninstall leaves the CRDs, the Ray objects and their Pods", testUninstall},
	}
	for _, s := range steps {
		if !t.Run(s.name, func(t *testing.T) { s.run(t, r) }) {
			t.FailNow()
		}
	}
	if r.loop != nil {
		replies := r.loop.Finish()
		r.loop = nil
		st := e2eutil.Summarize(replies)
		t.Logf("request loop from the RayService's first answer to the end: %v", st)
		if st.Failed > 0 {
			t.Errorf("%d of %d requests failed:\n%s", st.Failed, st.Total, e2eutil.Failures(replies, r.loopStarted, 10))
		}
	}
}

// repository is the image repository in the cluster's registry.
func (s *suite) repository() string { return s.registry.String() + "/ray-operator" }

// helm runs helm against the cluster as its admin (a user's helm) and
// returns its output and how long it took.
func (s *suite) helm(t *testing.T, args ...string) (string, time.Duration) {
	t.Helper()
	began := time.Now()
	out, err := helmchart.Helm(t, append(args, "--kubeconfig", s.Cluster.KubeconfigPath())...)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return out, time.Since(began)
}

// helmApply runs `helm install` or `helm upgrade` of the chart for r
// with --wait, and returns how long it took.
func (s *suite) helmApply(t *testing.T, verb string, r helmchart.Release) time.Duration {
	t.Helper()
	return s.helmApplyChart(t, verb, helmchart.Dir(t), r)
}

// helmApplyChart is helmApply of another chart.
func (s *suite) helmApplyChart(t *testing.T, verb, chart string, r helmchart.Release) time.Duration {
	t.Helper()
	args := append([]string{verb}, r.Args(chart)...)
	args = append(args, "--wait", "--timeout", helmTimeout.String())
	if verb == "install" {
		args = append(args, "--create-namespace")
	}
	_, took := s.helm(t, args...)
	t.Logf("helm %s (%s) --wait: %v", verb, strings.Join(r.Set, ","), took.Round(time.Millisecond))
	return took
}

// pushImage builds the image of version and pushes it into the
// cluster's registry.
func (s *suite) pushImage(t *testing.T, version string) string {
	t.Helper()
	ref, err := s.images.buildAndPush(t.Context(), s.repository(), version)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("image %s: built (this platform) in %v, pushed in %v: %s", version,
		s.images.lastBuild.Round(time.Millisecond), s.images.lastPush.Round(time.Millisecond), ref)
	return ref
}

func testInstall(t *testing.T, r *run) {
	shared.pushImage(t, versionOne)
	began := time.Now()
	shared.helmApply(t, "install", r.release)
	pods := shared.operatorPods(t, 1)
	pod := pods[0]
	t.Logf("operator Pod %s Ready %v after helm install began", pod.Name, time.Since(began).Round(time.Millisecond))
	shared.logPullToReady(t, pod)
	requireOperatorPod(t, pod, versionOne)
	shared.requireActsAsServiceAccount(t, pods)
	// The RayService that serves from the upgrade to the end starts now,
	// while the next steps run.
	r.serviceNS = shared.rayServiceNamespace(t)
	shared.createHello(t, r.serviceNS)
}

// startLoop waits until the hello RayService serves, then starts the
// request loop against its serve Service, once.
func (r *run) startLoop(t *testing.T) {
	t.Helper()
	if r.loop != nil {
		return
	}
	r.url = shared.waitHello(t, r.serviceNS)
	r.loop = e2eutil.StartRequestLoop(r.url)
	r.loopStarted = time.Now()
}

// rayServiceNamespace creates the namespace of the RayService that serves
// throughout. It is not deleted: the operator is gone when the test ends,
// and the cluster goes with the package.
func (s *suite) rayServiceNamespace(t *testing.T) string {
	t.Helper()
	ns := fmt.Sprintf("serve-%d", time.Now().UnixNano()%100000)
	if _, err := s.Kubectl(t.Context(), "create", "namespace", ns); err != nil {
		t.Fatal(err)
	}
	return ns
}
