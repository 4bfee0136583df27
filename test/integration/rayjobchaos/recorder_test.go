package rayjobchaos_test

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/watch"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// violation is one broken invariant.
type violation struct {
	at        time.Time
	lifecycle string
	what      string
}

// violations collects broken invariants from every goroutine of the run.
type violations struct {
	mu   sync.Mutex
	list []violation
}

func (v *violations) add(lifecycle, format string, args ...any) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.list = append(v.list, violation{at: time.Now(), lifecycle: lifecycle, what: fmt.Sprintf(format, args...)})
}

func (v *violations) all() []violation {
	v.mu.Lock()
	defer v.mu.Unlock()
	return slices.Clone(v.list)
}

// statusAt is a RayJob status as a watch event delivered it.
type statusAt struct {
	at       time.Time
	status   rayv1.RayJobStatus
	suspend  bool
	deleting bool
}

// jobRecord is what the API server showed of one RayJob and its children.
type jobRecord struct {
	latest  *rayv1.RayJob
	gone    bool
	history []statusAt
	// clusterNames are every status.rayClusterName the RayJob showed; jobIDs
	// map every status.jobId to the cluster it showed it with.
	clusterNames map[string]bool
	jobIDs       map[string]string
	// created are the RayClusters created for it, in order; live those that
	// exist.
	created []string
	live    map[string]bool
	// submitters counts the submitter Jobs created per submission id.
	submitters map[string]int
}

// recorder keeps, from the watches, the latest state of every object and
// the history the invariants are checked on. The users of the lifecycles
// read the latest state from here instead of polling the API server.
type recorder struct {
	mu      sync.Mutex
	faults  *violations
	jobs    map[string]*jobRecord
	batch   map[string]*batchv1.Job
	pods    map[string]*corev1.Pod
	started time.Time
}

func newRecorder(faults *violations) *recorder {
	return &recorder{faults: faults, jobs: map[string]*jobRecord{}, batch: map[string]*batchv1.Job{},
		pods: map[string]*corev1.Pod{}, started: time.Now()}
}

// record returns the record of RayJob name, creating it.
func (r *recorder) record(name string) *jobRecord {
	jr := r.jobs[name]
	if jr == nil {
		jr = &jobRecord{clusterNames: map[string]bool{}, jobIDs: map[string]string{}, live: map[string]bool{}, submitters: map[string]int{}}
		r.jobs[name] = jr
	}
	return jr
}

func (r *recorder) rayJob(t watch.EventType, job *rayv1.RayJob) {
	r.mu.Lock()
	defer r.mu.Unlock()
	jr := r.record(job.Name)
	jr.latest, jr.gone = job.DeepCopy(), t == watch.Deleted
	entry := statusAt{at: time.Now(), status: *job.Status.DeepCopy(), suspend: job.Spec.Suspend, deleting: !job.DeletionTimestamp.IsZero()}
	if n := len(jr.history); n == 0 || !equality.Semantic.DeepEqual(jr.history[n-1].status, entry.status) ||
		jr.history[n-1].suspend != entry.suspend || jr.history[n-1].deleting != entry.deleting {
		jr.history = append(jr.history, entry)
	}
	if name := job.Status.RayClusterName; name != "" {
		jr.clusterNames[name] = true
		if id := job.Status.JobID; id != "" {
			jr.jobIDs[id] = name
		}
	}
}

// rayCluster records a cluster and checks, in the order the API server
// stored them, that a RayJob never has two clusters at once and that no
// cluster name is created twice.
func (r *recorder) rayCluster(t watch.EventType, cluster *rayv1.RayCluster) {
	r.mu.Lock()
	defer r.mu.Unlock()
	owner := controllerOf(cluster, rayv1.KindRayJob)
	jr := r.record(owner)
	switch t {
	case watch.Added:
		if owner == "" {
			r.faults.add("", "RayCluster %s has no RayJob controller", cluster.Name)
		}
		if len(jr.live) > 0 {
			r.faults.add(owner, "RayCluster %s created while %v exist: two clusters at once", cluster.Name, slices.Sorted(maps.Keys(jr.live)))
		}
		if slices.Contains(jr.created, cluster.Name) {
			r.faults.add(owner, "RayCluster %s created a second time", cluster.Name)
		}
		jr.created = append(jr.created, cluster.Name)
		jr.live[cluster.Name] = true
	case watch.Deleted:
		delete(jr.live, cluster.Name)
	}
}

// job records a batch Job and checks that no submission id gets two
// submitter Jobs.
func (r *recorder) job(t watch.EventType, job *batchv1.Job) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch t {
	case watch.Added:
		owner := controllerOf(job, rayv1.KindRayJob)
		jr := r.record(owner)
		id := submissionIDOf(job)
		jr.submitters[id]++
		if jr.submitters[id] > 1 {
			r.faults.add(owner, "submitter Job %s created again for submission id %s", job.Name, id)
		}
		r.batch[job.Name] = job.DeepCopy()
	case watch.Modified:
		r.batch[job.Name] = job.DeepCopy()
	case watch.Deleted:
		delete(r.batch, job.Name)
	}
}

func (r *recorder) pod(t watch.EventType, pod *corev1.Pod) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if t == watch.Deleted {
		delete(r.pods, pod.Name)
		return
	}
	r.pods[pod.Name] = pod.DeepCopy()
}

// rayJobState is the last state of a RayJob: a copy of the last object
// seen, whether it is gone, and its status history.
func (r *recorder) rayJobState(name string) (*rayv1.RayJob, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	jr := r.jobs[name]
	if jr == nil || jr.latest == nil {
		return nil, false
	}
	return jr.latest.DeepCopy(), jr.gone
}

// history is a RayJob's statuses, one line each, for reports.
func (r *recorder) history(name string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	jr := r.jobs[name]
	if jr == nil {
		return "  (never seen)"
	}
	var b strings.Builder
	for _, h := range jr.history {
		s := h.status
		fmt.Fprintf(&b, "  +%6.2fs %-12s jobStatus=%-9q reason=%q cluster=%s jobId=%s failed=%d succeeded=%d suspend=%v deleting=%v msg=%q\n",
			h.at.Sub(r.started).Seconds(), s.JobDeploymentStatus, s.JobStatus, s.Reason, s.RayClusterName, s.JobID,
			deref(s.Failed), deref(s.Succeeded), h.suspend, h.deleting, s.Message)
	}
	if jr.gone {
		b.WriteString("  (deleted)\n")
	}
	fmt.Fprintf(&b, "  clusters created %v\n", jr.created)
	return b.String()
}

func deref(p *int32) int32 {
	if p == nil {
		return 0
	}
	return *p
}

// batchJob is a copy of a batch Job, nil when there is none.
func (r *recorder) batchJob(name string) *batchv1.Job {
	r.mu.Lock()
	defer r.mu.Unlock()
	if j := r.batch[name]; j != nil {
		return j.DeepCopy()
	}
	return nil
}

// headPod is a copy of the head Pod of cluster, nil when there is none.
func (r *recorder) headPod(cluster string) *corev1.Pod {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, p := range r.pods {
		if p.Labels[rayv1.LabelCluster] == cluster && p.Labels[rayv1.LabelNodeType] == string(rayv1.HeadNode) && p.DeletionTimestamp.IsZero() {
			return p.DeepCopy()
		}
	}
	return nil
}

// snapshot is a copy of every RayJob's record, for the invariants.
func (r *recorder) snapshot() map[string]*jobRecord {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]*jobRecord, len(r.jobs))
	for name, jr := range r.jobs {
		cp := *jr
		cp.clusterNames, cp.jobIDs = maps.Clone(jr.clusterNames), maps.Clone(jr.jobIDs)
		cp.created, cp.submitters = slices.Clone(jr.created), maps.Clone(jr.submitters)
		out[name] = &cp
	}
	return out
}
