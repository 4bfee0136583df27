package install_test

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/local/internal/e2eutil"
)

// releaseFile is the file a waiting RayJob's entrypoint waits for on its
// head: the test creates it (kubectl exec) when the job may end.
const releaseFile = "/tmp/release-the-job"

// quickEntrypoint ends at once, after a Ray task.
const quickEntrypoint = `python -c "import ray; ray.init(); print(ray.get(ray.remote(lambda: 6 * 7).remote()))"`

// waitingEntrypoint runs until releaseFile exists on the head.
const waitingEntrypoint = `python -c "import os, time, ray; ray.init()
while not os.path.exists('` + releaseFile + `'): time.sleep(0.2)
print('released')"`

// rayJob is a K8sJobMode RayJob of a head-only cluster of the pinned Ray.
func rayJob(ns, name, entrypoint string) *rayv1.RayJob {
	head := corev1.PodSpec{
		TerminationGracePeriodSeconds: ptr.To[int64](e2eutil.HelloGracePeriod),
		Containers: []corev1.Container{{
			Name:  "ray-head",
			Image: "rayproject/ray:2.60.0",
			Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("400m"), corev1.ResourceMemory: resource.MustParse("1Gi")},
				Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("2Gi")},
			},
		}},
	}
	return &rayv1.RayJob{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: rayv1.RayJobSpec{
			SubmissionMode: rayv1.K8sJobMode,
			Entrypoint:     entrypoint,
			RayClusterSpec: &rayv1.RayClusterSpec{
				RayVersion: "2.60.0",
				HeadGroupSpec: rayv1.HeadGroupSpec{
					RayStartParams: map[string]string{},
					Template:       corev1.PodTemplateSpec{Spec: head},
				},
			},
		},
	}
}

// namespace makes a namespace for t, deleted when t ends (while the
// operator still runs to remove its finalizers).
func (s *suite) namespace(t *testing.T) string {
	t.Helper()
	return e2eutil.Namespace(t, s.Client, func(ctx context.Context, ns string) { s.Dump(ctx, t, ns) })
}

// requireSucceeded fails t unless the RayJob ended Complete/SUCCEEDED.
func requireSucceeded(t *testing.T, job *rayv1.RayJob) {
	t.Helper()
	if st := job.Status; st.JobDeploymentStatus != rayv1.JobDeploymentStatusComplete || st.JobStatus != rayv1.JobStatusSucceeded {
		t.Fatalf("RayJob %s ended %s/%s (%s), want Complete/SUCCEEDED", job.Name, st.JobDeploymentStatus, st.JobStatus, st.Message)
	}
}

func testRayJob(t *testing.T, _ *run) {
	ns := shared.namespace(t)
	job := rayJob(ns, "quick", quickEntrypoint)
	if err := shared.Client.Create(t.Context(), job); err != nil {
		t.Fatal(err)
	}
	done := shared.WaitRayJob(t, ns, job.Name, rayTimeout)
	requireSucceeded(t, done)
	shared.requireWrittenByServiceAccount(t, "rayclusters", ns, done.Status.RayClusterName)
	shared.requireWrittenByServiceAccount(t, "jobs", ns, job.Name)
	shared.requireWrittenByServiceAccount(t, "pods", ns, "")
}

// headPod returns the head Pod of cluster in ns.
func (s *suite) headPod(t *testing.T, ns, cluster string) corev1.Pod {
	t.Helper()
	pods, err := s.RayPods(t.Context(), ns, cluster, string(rayv1.HeadNode))
	if err != nil || len(pods) != 1 {
		t.Fatalf("head Pods of %s: %d (%v), want 1", cluster, len(pods), err)
	}
	return pods[0]
}

// createHello creates the hello RayService (and its module's ConfigMap)
// in ns.
func (s *suite) createHello(t *testing.T, ns string) {
	t.Helper()
	if err := s.Client.Create(t.Context(), e2eutil.HelloApp(ns)); err != nil {
		t.Fatal(err)
	}
	if err := s.Client.Create(t.Context(), e2eutil.HelloRayService(ns, "v1")); err != nil {
		t.Fatal(err)
	}
}

// waitHello waits until the hello RayService in ns serves on one cluster
// and its serve Service answers, and returns the Service's URL.
func (s *suite) waitHello(t *testing.T, ns string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), rayTimeout)
	defer cancel()
	rs := &rayv1.RayService{}
	err := e2eutil.Poll(ctx, e2eutil.PollInterval, func() (bool, error) {
		if err := s.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: e2eutil.HelloName}, rs); err != nil {
			return false, err
		}
		err := e2eutil.ServingOneCluster(rs)
		return err == nil, err
	})
	if err != nil {
		s.Dump(context.WithoutCancel(ctx), t, ns)
		t.Fatalf("RayService %s/%s does not serve: %v", ns, e2eutil.HelloName, err)
	}
	svc := &corev1.Service{}
	if err := s.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: e2eutil.HelloName + "-serve-svc"}, svc); err != nil {
		t.Fatal(err)
	}
	url := fmt.Sprintf("http://%s%s", net.JoinHostPort(svc.Spec.ClusterIP, strconv.Itoa(e2eutil.HelloServePort)), e2eutil.HelloRoute)
	loop := e2eutil.StartRequestLoop(url)
	defer loop.Finish()
	err = e2eutil.Poll(ctx, 100*time.Millisecond, func() (bool, error) {
		return loop.Answered("v1") > 0, fmt.Errorf("no answer v1 from %s yet", url)
	})
	if err != nil {
		t.Fatal(err)
	}
	return url
}
