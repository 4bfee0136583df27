package install_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/testing/helmchart"
	"github.com/ray-operator/ray-operator/local/internal/e2eutil"
)

// rayObjects are the UIDs of the Ray objects and what they own in some
// namespaces, by "kind ns/name": RayClusters, Ray Pods (ray.io/node-type)
// and the RayJobs' submitter Jobs. An object recreated under its name
// shows as another UID.
type rayObjects map[string]types.UID

func (s *suite) rayObjects(t *testing.T, namespaces ...string) rayObjects {
	t.Helper()
	out := rayObjects{}
	for _, ns := range namespaces {
		clusters := &rayv1.RayClusterList{}
		pods := &corev1.PodList{}
		jobs := &batchv1.JobList{}
		for _, l := range []client.ObjectList{clusters, pods, jobs} {
			if err := s.Client.List(t.Context(), l, client.InNamespace(ns)); err != nil {
				t.Fatal(err)
			}
		}
		for _, c := range clusters.Items {
			out["RayCluster "+ns+"/"+c.Name] = c.UID
		}
		for _, p := range pods.Items {
			if _, ray := p.Labels[rayv1.LabelNodeType]; ray {
				out["Pod "+ns+"/"+p.Name] = p.UID
			}
		}
		for _, j := range jobs.Items {
			out["Job "+ns+"/"+j.Name] = j.UID
		}
	}
	return out
}

// requireSame fails t when an object of before is gone or has another
// UID in after, or after has new ones.
func requireSame(t *testing.T, what string, before, after rayObjects) {
	t.Helper()
	for k, uid := range before {
		if got, ok := after[k]; !ok || got != uid {
			t.Errorf("%s: %s was %s, is now %q", what, k, uid, got)
		}
	}
	for k := range after {
		if _, ok := before[k]; !ok {
			t.Errorf("%s: %s is new", what, k)
		}
	}
	if len(before) == 0 {
		t.Errorf("%s: no Ray objects to compare", what)
	}
}

// requireNoFailedRequests fails t when a reply of the loop after the
// first from failed, and logs the figures of those replies.
func requireNoFailedRequests(t *testing.T, r *run, what string, from int) int {
	t.Helper()
	replies := r.loop.Replies()
	st := e2eutil.Summarize(replies[from:])
	t.Logf("requests %s: %v", what, st)
	if st.Failed > 0 {
		t.Errorf("%d of %d requests %s failed:\n%s", st.Failed, st.Total, what, e2eutil.Failures(replies[from:], r.loopStarted, 10))
	}
	return len(replies)
}

// setValue replaces or adds key=value in the release's --set values.
func (r *run) setValue(key, value string) {
	r.release.Set = slices.DeleteFunc(r.release.Set, func(s string) bool { return strings.HasPrefix(s, key+"=") })
	r.release.Set = append(r.release.Set, key+"="+value)
}

func testUpgrade(t *testing.T, r *run) {
	r.startLoop(t)
	ns := shared.namespace(t)
	job := rayJob(ns, "waiting", waitingEntrypoint)
	if err := shared.Client.Create(t.Context(), job); err != nil {
		t.Fatal(err)
	}
	running := shared.waitJobRunning(t, ns, job.Name)
	before := shared.rayObjects(t, r.serviceNS, ns)
	oldPod := shared.operatorPods(t, 1)[0]
	mark := len(r.loop.Replies())

	shared.pushImage(t, versionTwo)
	r.setValue("image.tag", versionTwo)
	probe := startAdmissionProbe(shared.Client, ns)
	shared.helmApply(t, "upgrade", r.release)
	newPod := shared.operatorPods(t, 1)[0]
	requireAdmitted(t, "during helm upgrade", probe)
	if newPod.UID == oldPod.UID {
		t.Fatalf("helm upgrade kept the operator Pod %s", oldPod.Name)
	}
	shared.logPullToReady(t, newPod)
	requireOperatorPod(t, newPod, versionTwo)
	shared.requireBuildInfo(t, versionTwo)

	head := shared.headPod(t, ns, running.Status.RayClusterName)
	if _, err := shared.Kubectl(t.Context(), "exec", "-n", ns, head.Name, "-c", "ray-head", "--", "touch", releaseFile); err != nil {
		t.Fatal(err)
	}
	requireSucceeded(t, shared.WaitRayJob(t, ns, job.Name, rayTimeout))
	requireSame(t, "after the upgrade and the RayJob's end", before, shared.rayObjects(t, r.serviceNS, ns))
	requireNoFailedRequests(t, r, "from the push of the new image to the RayJob's end", mark)
	shared.requireActsAsServiceAccount(t, []corev1.Pod{oldPod, newPod})
}

// requireAdmitted stops the probe and fails t when the API server
// refused one of its creates.
func requireAdmitted(t *testing.T, what string, probe *admissionProbe) {
	t.Helper()
	total, failures := probe.finish()
	t.Logf("dry-run creates of a valid RayCluster %s: %d, %d refused", what, total, len(failures))
	if len(failures) > 0 {
		t.Errorf("%d of %d dry-run creates of a valid RayCluster %s were refused; first and last:\n%s\n%s",
			len(failures), total, what, failures[0], failures[len(failures)-1])
	}
}

// waitJobRunning waits until the RayJob's Ray job runs and returns it.
func (s *suite) waitJobRunning(t *testing.T, ns, name string) *rayv1.RayJob {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), rayTimeout)
	defer cancel()
	job := &rayv1.RayJob{}
	err := e2eutil.Poll(ctx, e2eutil.PollInterval, func() (bool, error) {
		if err := s.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, job); err != nil {
			return false, err
		}
		return job.Status.JobStatus == rayv1.JobStatusRunning, fmt.Errorf("deployment %q, job %q", job.Status.JobDeploymentStatus, job.Status.JobStatus)
	})
	if err != nil {
		s.Dump(context.WithoutCancel(ctx), t, ns)
		t.Fatalf("RayJob %s does not run: %v", name, err)
	}
	return job
}

// requireBuildInfo reads the operator's metrics through the chart's
// metrics Service and checks ray_operator_build_info names version.
func (s *suite) requireBuildInfo(t *testing.T, version string) {
	t.Helper()
	svc := &corev1.Service{}
	if err := s.Client.Get(t.Context(), client.ObjectKey{Namespace: helmchart.ReleaseNamespace, Name: helmchart.ReleaseName}, svc); err != nil {
		t.Fatal(err)
	}
	url := "http://" + net.JoinHostPort(svc.Spec.ClusterIP, "8080") + "/metrics"
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(body), "\n") {
		if strings.HasPrefix(line, "ray_operator_build_info{") {
			if !strings.Contains(line, `version="`+version+`"`) {
				t.Fatalf("%s: %s, want version %q", url, line, version)
			}
			t.Logf("%s: %s", url, line)
			return
		}
	}
	t.Fatalf("%s has no ray_operator_build_info (status %s)", url, resp.Status)
}
