package install_test

import (
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/testing/helmchart"
	"github.com/ray-operator/ray-operator/local/internal/e2eutil"
)

// The Ray objects the switch carries over, in one namespace.
const (
	switchCluster = "workers"
	switchJob     = "waiting"
)

// versionSwitch is the version stamp of our image the switch installs:
// not the other test's, whose first install pulls its image.
const versionSwitch = "v0.0.0-install.0"

// rayCRDs are the CRDs KubeRay's chart installs at kuberayCommit.
var rayCRDs = []string{"rayclusters.ray.io", "rayjobs.ray.io", "rayservices.ray.io", "raycronjobs.ray.io"}

// switchRun is what the steps of the switch share: the run of our release
// (the RayService's namespace, its request loop), KubeRay's tree, and
// the Ray objects as KubeRay's operator left them.
type switchRun struct {
	*run
	kuberay *kuberay
	before  rayObjects
}

// TestSwitchFromKubeRay starts where a KubeRay user is: KubeRay's operator
// built from its reference commit with this project's image builder,
// installed with KubeRay's own chart, running a RayService, a RayCluster
// and a RayJob with real Ray. It then switches as docs/install.md tells
// (uninstall KubeRay's release, hand the CRDs over, install this chart)
// while the RayService answers a request loop, and checks that nothing
// is recreated and this operator carries on; last, with two replicas, it
// SIGKILLs the leader's process, which cannot release the Lease.
//
// It runs before TestHelmInstallUpgradeFailoverUninstall (file order) and
// leaves the cluster as it found it: no release, no CRDs.
func TestSwitchFromKubeRay(t *testing.T) {
	shared.auditFrom = time.Now()
	t.Cleanup(func() { shared.teardownRelease(t) })
	r := &switchRun{run: &run{release: helmchart.Release{
		Name:      helmchart.ReleaseName,
		Namespace: helmchart.ReleaseNamespace,
		Set:       []string{"image.repository=" + shared.repository(), "image.tag=" + versionSwitch},
	}}}
	t.Cleanup(func() {
		if r.loop != nil {
			r.loop.Finish()
		}
	})
	r.serviceNS = shared.namespace(t)
	steps := []struct {
		name string
		run  func(*testing.T, *switchRun)
	}{
		{"KubeRay's chart installs KubeRay's operator, built here from its source", testKubeRayInstall},
		{"a RayService, a RayCluster and a RayJob run under KubeRay's operator", testUnderKubeRay},
		{"helm uninstall KubeRay's release, helm install ours: nothing recreated", testSwitch},
		{"our operator takes the objects over", testTakenOver},
		{"two replicas: the leader's process SIGKILLed", testLeaderKilled},
	}
	for _, s := range steps {
		if !t.Run(s.name, func(t *testing.T) { s.run(t, r) }) {
			t.FailNow()
		}
	}
	replies := r.loop.Finish()
	r.loop = nil
	st := e2eutil.Summarize(replies)
	t.Logf("request loop from the RayService's first answer under KubeRay to the end: %v", st)
	if st.Failed > 0 {
		t.Errorf("%d of %d requests failed:\n%s", st.Failed, st.Total, e2eutil.Failures(replies, r.loopStarted, 10))
	}
}

func testKubeRayInstall(t *testing.T, r *switchRun) {
	var ref string
	r.kuberay, ref = shared.pushKubeRay(t)
	// Ours too, now, so that the switch's time is the switch's.
	shared.pushImage(t, versionSwitch)
	kuberay := helmchart.Release{
		Name:      helmchart.ReleaseName,
		Namespace: helmchart.ReleaseNamespace,
		Set:       []string{"image.repository=" + shared.kuberayRepository(), "image.tag=" + kuberayCommit},
	}
	shared.helmApplyChart(t, "install", r.kuberay.chart, kuberay)
	pod := shared.operatorPods(t, 1)[0]
	if c := pod.Spec.Containers[0]; c.Image != shared.kuberayRepository()+":"+kuberayCommit {
		t.Fatalf("the operator Pod %s runs %q, want KubeRay's image (pushed as %s)", pod.Name, c.Image, ref)
	}
	shared.logPullToReady(t, pod)
	for _, name := range rayCRDs {
		crd := shared.crd(t, name)
		t.Logf("KubeRay's CRD %s: served %v, stored %v, labels %v", name, servedVersions(crd), crd.Status.StoredVersions, crd.Labels)
	}
}

func testUnderKubeRay(t *testing.T, r *switchRun) {
	ns := r.serviceNS
	shared.createHello(t, ns)
	for _, obj := range []client.Object{workersCluster(ns, 1), rayJob(ns, switchJob, waitingEntrypoint)} {
		if err := shared.Client.Create(t.Context(), obj); err != nil {
			t.Fatal(err)
		}
	}
	shared.waitJobRunning(t, ns, switchJob)
	shared.waitWorkers(t, ns, 1)
	r.startLoop(t)
	shared.requireCreatedBy(t, kuberayUserAgent, "rayclusters", ns)
	shared.requireCreatedBy(t, kuberayUserAgent, "pods", ns)
	shared.requireCreatedBy(t, kuberayUserAgent, "jobs", ns)
	r.before = shared.rayObjects(t, ns)
	t.Logf("under KubeRay's operator: %d Ray objects (RayClusters, Ray Pods, submitter Jobs)", len(r.before))
}

func testSwitch(t *testing.T, r *switchRun) {
	mark := len(r.loop.Replies())
	began := time.Now()
	_, took := shared.helm(t, "uninstall", helmchart.ReleaseName, "--namespace", helmchart.ReleaseNamespace, "--wait")
	t.Logf("helm uninstall of KubeRay's release --wait: %v", took.Round(time.Millisecond))
	left, err := shared.lease(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	// KubeRay's operator does not release the Lease as it stops: ours
	// waits until it expires.
	t.Logf("after the uninstall the Lease is held by %q, renewed %v before the uninstall began, for %ds",
		ptr.Deref(left.Spec.HolderIdentity, ""), began.Sub(left.Spec.RenewTime.Time).Round(time.Millisecond), ptr.Deref(left.Spec.LeaseDurationSeconds, 0))
	requireNoRayWebhooks(t)
	shared.adoptCRDs(t)
	shared.helmApply(t, "install", r.release)
	pod := shared.operatorPods(t, 1)[0]
	requireOperatorPod(t, pod, versionSwitch)
	lease := shared.waitLeader(t, pod.Name)
	t.Logf("switch: from helm uninstall to our operator leading %v (Lease acquired %v after the uninstall began)",
		time.Since(began).Round(time.Millisecond), lease.Spec.AcquireTime.Sub(began).Round(time.Millisecond))
	for _, name := range rayCRDs {
		crd := shared.crd(t, name)
		t.Logf("CRD %s after the switch: served %v, stored %v", name, servedVersions(crd), crd.Status.StoredVersions)
	}
	requireSame(t, "after the switch", r.before, shared.rayObjects(t, r.serviceNS))
	requireNoFailedRequests(t, r.run, "from helm uninstall of KubeRay's release to our operator leading", mark)
}

func testTakenOver(t *testing.T, r *switchRun) {
	ns := r.serviceNS
	mark := len(r.loop.Replies())
	shared.waitHello(t, ns)
	shared.waitWorkers(t, ns, 1)
	// The job KubeRay's operator submitted ends under ours.
	job := &rayv1.RayJob{}
	if err := shared.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: switchJob}, job); err != nil {
		t.Fatal(err)
	}
	head := shared.headPod(t, ns, job.Status.RayClusterName)
	if _, err := shared.Kubectl(t.Context(), "exec", "-n", ns, head.Name, "-c", "ray-head", "--", "touch", releaseFile); err != nil {
		t.Fatal(err)
	}
	requireSucceeded(t, shared.WaitRayJob(t, ns, switchJob, rayTimeout))
	requireSame(t, "after the RayJob's end under our operator", r.before, shared.rayObjects(t, ns))
	shared.scaleWorkers(t, ns, 2)
	requireNoFailedRequests(t, r.run, "from our operator leading to the RayJob's end and the scale-up", mark)
}

// workersCluster is a RayCluster of the pinned Ray with one worker group
// of replicas small workers.
func workersCluster(ns string, replicas int32) *rayv1.RayCluster {
	spec := rayJob(ns, "", "").Spec.RayClusterSpec
	worker := corev1.PodSpec{
		TerminationGracePeriodSeconds: spec.HeadGroupSpec.Template.Spec.TerminationGracePeriodSeconds,
		Containers: []corev1.Container{{
			Name:      "ray-worker",
			Image:     "rayproject/ray:2.60.0",
			Resources: spec.HeadGroupSpec.Template.Spec.Containers[0].Resources,
		}},
	}
	spec.WorkerGroupSpecs = []rayv1.WorkerGroupSpec{{
		GroupName:      "small",
		Replicas:       &replicas,
		MinReplicas:    new(int32),
		MaxReplicas:    ptr.To[int32](4),
		RayStartParams: map[string]string{},
		Template:       corev1.PodTemplateSpec{Spec: worker},
	}}
	return &rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Name: switchCluster, Namespace: ns}, Spec: *spec}
}

// crd returns the live CRD name.
func (s *suite) crd(t *testing.T, name string) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := s.Client.Get(t.Context(), client.ObjectKey{Name: name}, crd); err != nil {
		t.Fatal(err)
	}
	return crd
}

func servedVersions(crd *apiextensionsv1.CustomResourceDefinition) []string {
	var out []string
	for _, v := range crd.Spec.Versions {
		if v.Served {
			out = append(out, v.Name)
		}
	}
	return out
}

// adoptCRDs runs the commands of docs/install.md ("Migrating from
// KubeRay's chart") that hand the CRDs KubeRay's chart installed to our
// release.
func (s *suite) adoptCRDs(t *testing.T) {
	t.Helper()
	label := append([]string{"label", "crd"}, rayCRDs...)
	label = append(label, "app.kubernetes.io/managed-by=Helm", "--overwrite")
	annotate := append([]string{"annotate", "crd"}, rayCRDs...)
	annotate = append(annotate, "meta.helm.sh/release-name="+helmchart.ReleaseName, "meta.helm.sh/release-namespace="+helmchart.ReleaseNamespace, "--overwrite")
	for _, args := range [][]string{label, annotate} {
		if out, err := s.Kubectl(t.Context(), args...); err != nil {
			t.Fatalf("kubectl %v: %v\n%s", args, err, out)
		}
	}
}

// waitLeader waits until the Lease is held by pod and returns it.
func (s *suite) waitLeader(t *testing.T, pod string) *coordinationv1.Lease {
	t.Helper()
	return s.waitLease(t, "the operator Pod "+pod+" does not lead", func(l *coordinationv1.Lease) bool { return holderPod(l) == pod })
}
