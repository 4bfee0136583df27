package soak_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/local/internal/e2eutil"
)

// The RayJobs of a cycle: one whose Ray job succeeds, one whose Ray job
// exits 3 on purpose and must end FAILED.
const (
	okEntrypoint   = `python -c "import ray; ray.init(); print('answer', ray.get(ray.remote(lambda: 42).remote()))"`
	failEntrypoint = `python -c "import sys; print('failing on purpose'); sys.exit(3)"`
)

// Bounds of one RayJob (creation to its deletion) and of one upgrade
// (spec change to the old cluster gone and the new version answering), on
// a 2-core machine.
const (
	jobTimeout     = 6 * time.Minute
	upgradeTimeout = 6 * time.Minute
	pollEvery      = 2 * time.Second
)

// outcome is how one RayJob ended against what it had to.
type outcome struct {
	name   string
	mode   rayv1.JobSubmissionMode
	want   rayv1.JobStatus
	got    rayv1.JobStatus
	deploy rayv1.JobDeploymentStatus
	reason rayv1.JobFailedReason
	took   time.Duration
	err    error
}

// right: the Ray job ended as it had to and the RayJob says so.
func (o outcome) right() bool {
	if o.err != nil || o.got != o.want {
		return false
	}
	if o.want == rayv1.JobStatusSucceeded {
		return o.deploy == rayv1.JobDeploymentStatusComplete
	}
	return o.deploy == rayv1.JobDeploymentStatusFailed && o.reason == rayv1.AppFailed
}

func (o outcome) String() string {
	if o.err != nil {
		return fmt.Sprintf("%s (%s): %v", o.name, o.mode, o.err)
	}
	return fmt.Sprintf("%s (%s): %s/%s %s in %v, want %s", o.name, o.mode, o.got, o.deploy, o.reason, o.took.Round(time.Second), o.want)
}

// workload drives the soak's objects in one namespace.
type workload struct {
	c       client.Client
	ns      string
	version int
}

// soakRayJob is a RayJob of mode running entrypoint on a head-only cluster
// (one Ray CPU, half a CPU requested so that two jobs and the RayService
// fit the node) deleted as soon as the job ends.
func soakRayJob(ns, name, entrypoint string, mode rayv1.JobSubmissionMode) *rayv1.RayJob {
	grace := int64(5)
	return &rayv1.RayJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: rayv1.RayJobSpec{
			SubmissionMode:           mode,
			Entrypoint:               entrypoint,
			ShutdownAfterJobFinishes: true,
			RayClusterSpec: &rayv1.RayClusterSpec{
				RayVersion: "2.52.0",
				HeadGroupSpec: rayv1.HeadGroupSpec{
					RayStartParams: map[string]string{"num-cpus": "1"},
					Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
						TerminationGracePeriodSeconds: &grace,
						Containers: []corev1.Container{{
							Name: "ray-head", Image: "rayproject/ray:2.52.0",
							Resources: corev1.ResourceRequirements{
								Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("1Gi")},
								Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("2Gi")},
							},
						}},
					}},
				},
			},
		},
	}
}

// runCycle runs cycle i's two RayJobs at once, the succeeding one in
// HTTPMode or K8sJobMode by turns, the failing one in HTTPMode.
func (w *workload) runCycle(ctx context.Context, i int) []outcome {
	okMode := rayv1.HTTPMode
	if i%2 == 1 {
		okMode = rayv1.K8sJobMode
	}
	jobs := []*rayv1.RayJob{
		soakRayJob(w.ns, fmt.Sprintf("ok-%d", i), okEntrypoint, okMode),
		soakRayJob(w.ns, fmt.Sprintf("fail-%d", i), failEntrypoint, rayv1.HTTPMode),
	}
	wants := []rayv1.JobStatus{rayv1.JobStatusSucceeded, rayv1.JobStatusFailed}
	out := make([]outcome, len(jobs))
	var wg sync.WaitGroup
	for k := range jobs {
		wg.Go(func() { out[k] = w.runJob(ctx, jobs[k], wants[k]) })
	}
	wg.Wait()
	return out
}

// runJob creates job, waits until it is terminal and its cluster is gone,
// then deletes it and waits until it is gone (its submitter Job with it).
func (w *workload) runJob(ctx context.Context, job *rayv1.RayJob, want rayv1.JobStatus) outcome {
	o := outcome{name: job.Name, mode: job.Spec.SubmissionMode, want: want}
	ctx, cancel := context.WithTimeout(ctx, jobTimeout)
	defer cancel()
	began := time.Now()
	if o.err = w.c.Create(ctx, job); o.err != nil {
		return o
	}
	key := client.ObjectKeyFromObject(job)
	o.err = e2eutil.Poll(ctx, pollEvery, func() (bool, error) {
		if err := w.c.Get(ctx, key, job); err != nil {
			return false, err
		}
		st := job.Status
		return rayv1.IsJobDeploymentTerminal(st.JobDeploymentStatus), fmt.Errorf("%s/%s", st.JobStatus, st.JobDeploymentStatus)
	})
	if o.err != nil {
		o.err = fmt.Errorf("waiting for a terminal state: %w", o.err)
		return o
	}
	o.took = time.Since(began)
	o.got, o.deploy, o.reason = job.Status.JobStatus, job.Status.JobDeploymentStatus, job.Status.Reason
	if o.err = w.waitGone(ctx, &rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: job.Status.RayClusterName}}); o.err != nil {
		o.err = fmt.Errorf("shutdownAfterJobFinishes: %w", o.err)
		return o
	}
	if o.err = w.c.Delete(ctx, job); o.err == nil {
		o.err = w.waitGone(ctx, job)
	}
	return o
}

// waitGone waits until obj no longer exists.
func (w *workload) waitGone(ctx context.Context, obj client.Object) error {
	err := e2eutil.Poll(ctx, pollEvery, func() (bool, error) {
		err := w.c.Get(ctx, client.ObjectKeyFromObject(obj), obj)
		return apierrors.IsNotFound(err), err
	})
	if err != nil {
		return fmt.Errorf("%T %s is not gone: %w", obj, obj.GetName(), err)
	}
	return nil
}

// startService creates the hello RayService (version 1) and waits until it
// serves.
func (w *workload) startService(ctx context.Context) error {
	w.version = 1
	if err := w.c.Create(ctx, e2eutil.HelloApp(w.ns)); err != nil {
		return err
	}
	if err := w.c.Create(ctx, e2eutil.HelloRayService(w.ns, w.versionName())); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, upgradeTimeout)
	defer cancel()
	rs, err := w.waitService(ctx, func(rs *rayv1.RayService) error { return e2eutil.ServingOneCluster(rs) })
	if err != nil {
		return err
	}
	return w.waitAnswer(ctx, rs)
}

func (w *workload) versionName() string { return "v" + strconv.Itoa(w.version) }

// upgrade changes the head's APP_VERSION (a blue/green upgrade) and waits
// until the RayService serves from a new cluster, the old one is gone,
// and the serve Service answers with the new version.
func (w *workload) upgrade(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, upgradeTimeout)
	defer cancel()
	w.version++
	rs, err := e2eutil.SetHelloHeadPod(ctx, w.c, w.ns, e2eutil.HelloHeadPod(w.versionName()))
	if err != nil {
		return fmt.Errorf("changing APP_VERSION: %w", err)
	}
	old := rs.Status.ActiveServiceStatus.RayClusterName
	rs, err = w.waitService(ctx, func(rs *rayv1.RayService) error {
		if active := rs.Status.ActiveServiceStatus.RayClusterName; active == old {
			return fmt.Errorf("still serving from %s", old)
		}
		return e2eutil.ServingOneCluster(rs)
	})
	if err != nil {
		return err
	}
	if err := w.waitGone(ctx, &rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: old}}); err != nil {
		return err
	}
	return w.waitAnswer(ctx, rs)
}

// waitService waits until cond holds for the RayService.
func (w *workload) waitService(ctx context.Context, cond func(*rayv1.RayService) error) (*rayv1.RayService, error) {
	rs := &rayv1.RayService{}
	key := client.ObjectKey{Namespace: w.ns, Name: e2eutil.HelloName}
	err := e2eutil.Poll(ctx, pollEvery, func() (bool, error) {
		if err := w.c.Get(ctx, key, rs); err != nil {
			return false, err
		}
		err := cond(rs)
		return err == nil, err
	})
	if err != nil {
		return nil, fmt.Errorf("RayService %s: %w", w.versionName(), err)
	}
	return rs, nil
}

// waitAnswer waits until the serve Service answers with the current
// version.
func (w *workload) waitAnswer(ctx context.Context, rs *rayv1.RayService) error {
	svc := &corev1.Service{}
	if err := w.c.Get(ctx, client.ObjectKey{Namespace: w.ns, Name: rs.Name + "-serve-svc"}, svc); err != nil {
		return err
	}
	url := fmt.Sprintf("http://%s%s", net.JoinHostPort(svc.Spec.ClusterIP, strconv.Itoa(e2eutil.HelloServePort)), e2eutil.HelloRoute)
	httpc := &http.Client{Timeout: 5 * time.Second}
	err := e2eutil.Poll(ctx, pollEvery, func() (bool, error) {
		body, err := get(ctx, httpc, url)
		return err == nil && body == w.versionName(), fmt.Errorf("answer %q, %v", body, err)
	})
	if err != nil {
		return fmt.Errorf("the serve Service answering %s: %w", w.versionName(), err)
	}
	return nil
}

// get returns the body of a GET of url, trimmed.
func get(ctx context.Context, c *http.Client, url string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	resp, err := c.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%s: %s", resp.Status, body)
	}
	return strings.TrimSpace(string(body)), err
}
