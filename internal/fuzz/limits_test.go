package fuzz

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/batchscheduler/volcano"
	"github.com/ray-operator/ray-operator/internal/clusterowner"
	"github.com/ray-operator/ray-operator/internal/incrementalupgrade"
	"github.com/ray-operator/ray-operator/internal/naming"
	"github.com/ray-operator/ray-operator/internal/raypod"
	"github.com/ray-operator/ray-operator/internal/rayservices"
	"github.com/ray-operator/ray-operator/internal/submitter"
	validate "github.com/ray-operator/ray-operator/internal/validation"
)

// nameProblems checks an object's name (or generateName plus the five
// characters the API server appends) by the rule of its kind, and its
// label keys and values. Services and batch Jobs (whose name is a label of
// their Pods) must be DNS-1035/1123 labels; RayClusters and RayJobs must
// pass this operator's metadata validation, since their controller runs it;
// everything else a DNS-1123 subdomain.
func nameProblems(obj client.Object) error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	name := obj.GetName()
	if name == "" {
		name = strings.TrimSuffix(obj.GetGenerateName(), "-") + "-abcde"
	}
	var msgs []string
	switch o := obj.(type) {
	case *corev1.Service:
		msgs = validation.IsDNS1035Label(name)
	case *batchv1.Job:
		msgs = validation.IsDNS1123Label(name)
	case *rayv1.RayCluster:
		if err := validate.RayClusterMetadata(o.ObjectMeta); err != nil {
			msgs = []string{err.Error()}
		}
	case *rayv1.RayJob:
		if err := validate.RayJobMetadata(o.ObjectMeta); err != nil {
			msgs = []string{err.Error()}
		}
	default:
		msgs = validation.IsDNS1123Subdomain(name)
	}
	for _, msg := range msgs {
		add("%T %q: %s", obj, name, msg)
	}
	for k, v := range obj.GetLabels() {
		for _, msg := range append(validation.IsQualifiedName(k), validation.IsValidLabelValue(v)...) {
			add("%T %q: label %q=%q: %s", obj, name, k, v, msg)
		}
	}
	return errors.Join(errs...)
}

// Names at their length limits: the longest namespace, and the longest
// RayCluster, RayJob, RayService and RayCronJob names validation accepts.
var (
	longNamespace  = "n" + strings.Repeat("s", validation.DNS1123LabelMaxLength-1)
	longCluster    = "c" + strings.Repeat("l", validate.MaxRayClusterNameLength-1)
	longRayJob     = "j" + strings.Repeat("o", validate.MaxRayJobNameLength-1)
	longRayService = "s" + strings.Repeat("v", validate.MaxRayServiceNameLength-1)
	longCronJob    = "r" + strings.Repeat("c", validate.MaxRayCronJobNameLength-1)
	// longGroup is the longest worker group name (a label value).
	longGroup = "g" + strings.Repeat("r", validation.LabelValueMaxLength-1)
)

// limitCluster is a cluster at every name limit: its name, its namespace,
// a worker group named at the label limit, a multi-host one (its replica
// name is a label too), and a group whose Pod name prefix is cut at 50
// characters right after a '.', with GCS fault tolerance, autoscaling,
// the dashboard Ingress and token auth, so that every child is built.
func limitCluster(name string) *rayv1.RayCluster {
	rc := knobCluster(name, longGroup, 1, 1, "2.60.0", true)
	rc.Namespace = longNamespace
	dotted := rc.Spec.WorkerGroupSpecs[0].DeepCopy()
	dotted.GroupName = strings.Repeat("d", max(1, 48-len(name))) + ".x"
	multiHost := rc.Spec.WorkerGroupSpecs[0].DeepCopy()
	multiHost.GroupName, multiHost.NumOfHosts = "h"+strings.Repeat("o", validation.LabelValueMaxLength-1), 2
	rc.Spec.WorkerGroupSpecs = append(rc.Spec.WorkerGroupSpecs, *dotted, *multiHost)
	rc.Spec.GcsFaultToleranceOptions = &rayv1.GcsFaultToleranceOptions{RedisAddress: "redis:6379"}
	rc.Spec.HeadGroupSpec.EnableIngress = ptr.To(true)
	rc.Spec.AuthOptions = &rayv1.AuthOptions{Mode: rayv1.AuthModeToken}
	rc.Annotations = map[string]string{rayv1.AnnotationEnableServeService: "true"}
	return rc
}

// TestNamesAtLengthLimits builds every child of RayClusters, RayJobs,
// RayServices and RayCronJobs named at the limits validation allows, in
// the longest namespace, and checks every name and label it gets.
func TestNamesAtLengthLimits(t *testing.T) {
	if len(longCluster) != 53 || len(longRayJob) != 47 || len(longRayService) != 47 || len(longCronJob) != 36 {
		t.Fatalf("limits %d %d %d %d, want KubeRay's 53 47 47 36", len(longCluster), len(longRayJob), len(longRayService), len(longCronJob))
	}
	cases := map[string]func(t *testing.T) []client.Object{
		"RayCluster": func(t *testing.T) []client.Object {
			return clusterChildren(t, limitCluster(longCluster))
		},
		"RayCluster with a Pod name prefix cut after a dot": func(t *testing.T) []client.Object {
			return clusterChildren(t, limitCluster(longCluster[:40]))
		},
		"RayJob": func(t *testing.T) []client.Object {
			job := &rayv1.RayJob{ObjectMeta: metaOf(longRayJob), Spec: rayv1.RayJobSpec{Entrypoint: "python main.py",
				RayClusterSpec: &limitCluster(longRayJob).Spec}}
			job.Namespace = longNamespace
			cluster := clusterowner.Build(job, rayv1.KindRayJob, job.Name+"-abcde", job.Spec.RayClusterSpec)
			cluster.Annotations = map[string]string{rayv1.AnnotationEnableServeService: "true"}
			sub, err := submitter.Job(job, cluster)
			if err != nil {
				t.Fatal(err)
			}
			objs := append(clusterChildren(t, cluster), job, cluster, sub,
				clusterowner.OwnerHeadService(job, rayv1.KindRayJob, cluster, rayservices.HeadServiceOptions{}))
			return append(objs, podGroupNamed(volcano.PodGroupName(cluster)))
		},
		"RayService": func(t *testing.T) []client.Object {
			rs := &rayv1.RayService{ObjectMeta: metaOf(longRayService), Spec: rayv1.RayServiceSpec{RayClusterSpec: limitCluster(longRayService).Spec}}
			rs.Namespace = longNamespace
			cluster := clusterowner.Build(rs, rayv1.KindRayService, rs.Name+"-abcde", &rs.Spec.RayClusterSpec)
			serve, err := rayservices.BuildRayServiceServeService(rs, cluster)
			if err != nil {
				t.Fatal(err)
			}
			perCluster, err := rayservices.BuildPerClusterServeService(rs, cluster)
			if err != nil {
				t.Fatal(err)
			}
			route := incrementalupgrade.HTTPRoute(rs, []incrementalupgrade.Backend{{Service: perCluster.Name, Port: 8000, Weight: 100}})
			return append(clusterChildren(t, cluster), cluster, serve, perCluster, route,
				clusterowner.OwnerHeadService(rs, rayv1.KindRayService, cluster, rayservices.HeadServiceOptions{}),
				incrementalupgrade.Gateway(rs, incrementalupgrade.Options{GatewayClassName: "istio"}))
		},
		"RayCronJob": func(*testing.T) []client.Object {
			// The RayJob of a schedule time is "<RayCronJob>-<minutes since
			// the epoch>": 8 digits now, 10 until the year 21000.
			var jobs []client.Object
			for _, at := range []time.Time{time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(20000, 1, 1, 0, 0, 0, 0, time.UTC)} {
				job := &rayv1.RayJob{ObjectMeta: metaOf(fmt.Sprintf("%s-%d", longCronJob, at.Unix()/60))}
				job.Labels = map[string]string{rayv1.LabelCronJobName: longCronJob}
				jobs = append(jobs, job)
			}
			return jobs
		},
	}
	for name, build := range cases {
		t.Run(name, func(t *testing.T) {
			var errs []error
			for _, obj := range build(t) {
				errs = append(errs, nameProblems(obj))
			}
			if err := errors.Join(errs...); err != nil {
				t.Error(err)
			}
		})
	}
}

// clusterChildren validates a cluster and builds its children (with a
// replica of each multi-host group), checking them as the fuzz targets do.
func clusterChildren(t *testing.T, rc *rayv1.RayCluster) []client.Object {
	t.Helper()
	if err := validateCluster(rc); err != nil {
		t.Fatalf("the cluster at the limits is refused: %v", err)
	}
	objs := buildCluster(t, rc)
	checkPods(t, rc, objs)
	for i, g := range rc.Spec.WorkerGroupSpecs {
		if g.NumOfHosts > 1 {
			pod, err := raypod.BuildWorkerPod(rc, i, raypod.WorkerIndex{ReplicaName: naming.WorkerReplicaName(g.GroupName, "abcde")}, raypod.Options{MultiHostIndexing: true})
			if err != nil {
				t.Fatal(err)
			}
			objs = append(objs, pod)
		}
	}
	return objs
}

// podGroupNamed stands for a batch scheduler's PodGroup of that name.
func podGroupNamed(name string) client.Object {
	return &corev1.ConfigMap{ObjectMeta: metaOf(name)}
}
