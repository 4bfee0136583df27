package faults_test

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/dashboard"
)

// Observation intervals: the RayJob and its submitter Job often enough to
// time a recovery to a fraction of a second, Ray's job list (a dashboard
// call through the API server's proxy) once a second.
const (
	watchInterval   = 200 * time.Millisecond
	rayListInterval = time.Second
)

// snapshot is what the observer saw last.
type snapshot struct {
	job *rayv1.RayJob
	// submitterJob: the K8sJobMode submitter Job exists.
	submitterJob bool
	// rayJobStatus is what Ray's job list says of status.jobId.
	rayJobStatus rayv1.JobStatus
	// clusterGone: the RayJob named a RayCluster that no longer exists.
	clusterGone bool
}

// observer follows a RayJob from outside as a user would: the object, its
// submitter Job, its RayCluster, and Ray's own job list on that cluster.
// It records when the RayJob's status changed (only the operator writes
// it) and every submission id Ray ever listed, so that a second submission
// is caught even if it came and went between two looks.
type observer struct {
	s        *suite
	key      types.NamespacedName
	mu       sync.Mutex
	last     snapshot
	lastJSON string
	// progress holds the times the RayJob's status changed or its cluster
	// was seen gone: the operator's work becoming visible.
	progress []time.Time
	// submissions are the SUBMISSION-type jobs Ray listed, by submission id.
	submissions map[string]dashboard.JobInfo
	listErr     error
	// clusterGoneAt is when the RayJob's cluster was first seen gone.
	clusterGoneAt time.Time
}

func newObserver(s *suite, ns, name string) *observer {
	return &observer{s: s, key: types.NamespacedName{Namespace: ns, Name: name}, submissions: map[string]dashboard.JobInfo{}}
}

// run observes until ctx ends.
func (o *observer) run(ctx context.Context) {
	nextList := time.Now()
	ticker := time.NewTicker(watchInterval)
	defer ticker.Stop()
	for {
		o.look(ctx)
		if !time.Now().Before(nextList) {
			o.listRayJobs(ctx)
			nextList = time.Now().Add(rayListInterval)
		}
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}

// look reads the RayJob, its submitter Job and whether its cluster exists.
func (o *observer) look(ctx context.Context) {
	job := &rayv1.RayJob{}
	if err := o.s.Client.Get(ctx, o.key, job); err != nil {
		return
	}
	submitter := o.s.Client.Get(ctx, o.key, &batchv1.Job{}) == nil
	gone := false
	if name := job.Status.RayClusterName; name != "" {
		err := o.s.Client.Get(ctx, types.NamespacedName{Namespace: o.key.Namespace, Name: name}, &rayv1.RayCluster{})
		gone = apierrors.IsNotFound(err)
	}
	status, _ := json.Marshal(job.Status)
	now := time.Now()
	o.mu.Lock()
	defer o.mu.Unlock()
	if string(status) != o.lastJSON || gone != o.last.clusterGone {
		o.progress = append(o.progress, now)
		o.lastJSON = string(status)
	}
	if gone && !o.last.clusterGone {
		o.clusterGoneAt = now
	}
	o.last.job, o.last.submitterJob, o.last.clusterGone = job, submitter, gone
}

// listRayJobs reads Ray's job list on the RayJob's cluster, if it has one
// that answers.
func (o *observer) listRayJobs(ctx context.Context) {
	o.mu.Lock()
	job := o.last.job
	o.mu.Unlock()
	if job == nil || job.Status.RayClusterName == "" {
		return
	}
	jobs, err := o.s.rayJobs(ctx, o.key.Namespace, job.Status.RayClusterName)
	o.mu.Lock()
	defer o.mu.Unlock()
	o.listErr = err
	for _, j := range jobs {
		o.submissions[j.SubmissionID] = j
		if j.SubmissionID == job.Status.JobID {
			o.last.rayJobStatus = j.JobStatus
		}
	}
}

// snapshot returns what the observer saw last.
func (o *observer) snapshot() snapshot {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.last
}

// progressAfter is the first time after t that the operator's work became
// visible, or false.
func (o *observer) progressAfter(t time.Time) (time.Time, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, p := range o.progress {
		if p.After(t) {
			return p, true
		}
	}
	return time.Time{}, false
}

// clusterGone is when the RayJob's cluster was first seen gone.
func (o *observer) clusterGone() time.Time {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.clusterGoneAt
}

// submissionIDs are the submission ids Ray ever listed.
func (o *observer) submissionIDs() map[string]dashboard.JobInfo {
	o.mu.Lock()
	defer o.mu.Unlock()
	ids := make(map[string]dashboard.JobInfo, len(o.submissions))
	for id, j := range o.submissions {
		ids[id] = j
	}
	return ids
}

// rayJobs lists the SUBMISSION-type jobs of the RayCluster's dashboard
// through the API server's proxy, as the operator reaches it.
func (s *suite) rayJobs(ctx context.Context, ns, cluster string) ([]dashboard.JobInfo, error) {
	rc := &rayv1.RayCluster{}
	if err := s.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: cluster}, rc); err != nil {
		return nil, err
	}
	c, err := s.proxy.Clients()(s.proxy.DashboardURL(rc), "")
	if err != nil {
		return nil, err
	}
	all, err := c.ListJobs(ctx)
	if err != nil {
		return nil, err
	}
	var submissions []dashboard.JobInfo
	for _, j := range all {
		if j.Type == "SUBMISSION" {
			submissions = append(submissions, j)
		}
	}
	return submissions, nil
}
