package rediscleanup

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/raypod"
)

func newCluster(ft *rayv1.GcsFaultToleranceOptions) *rayv1.RayCluster {
	return &rayv1.RayCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "raycluster", Namespace: "default", UID: "uid-1"},
		Spec: rayv1.RayClusterSpec{
			GcsFaultToleranceOptions: ft,
			EnableInTreeAutoscaling:  ptr.To(true),
			HeadGroupSpec: rayv1.HeadGroupSpec{
				RayStartParams: map[string]string{},
				Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "ray-head", Image: "rayproject/ray:2.46.0",
					Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")}},
				}}}},
			},
		},
	}
}

func TestBuildJob(t *testing.T) {
	wantScript := func(user string) string {
		return "echo \"To get more information about manually deleting the storage namespace in Redis and removing the RayCluster's finalizer, please check https://docs.ray.io/en/master/cluster/kubernetes/user-guides/kuberay-gcs-ft.html for more details.\" && " +
			"python -c \"from ray._private.gcs_utils import cleanup_redis_storage; from urllib.parse import urlparse; import os; import sys; " +
			"redis_address = os.getenv('RAY_REDIS_ADDRESS', '').split(',')[0]; " +
			"redis_address = redis_address if '://' in redis_address else 'redis://' + redis_address; " +
			"parsed = urlparse(redis_address); " +
			"sys.exit(1) if not cleanup_redis_storage(host=parsed.hostname, port=parsed.port, " + user +
			"password=os.getenv('REDIS_PASSWORD', parsed.password or ''), use_ssl=parsed.scheme=='rediss', storage_namespace=os.getenv('RAY_external_storage_namespace')) else None\""
	}
	tests := map[string]struct {
		ft       *rayv1.GcsFaultToleranceOptions
		wantArgs []string
	}{
		"password only": {
			ft:       &rayv1.GcsFaultToleranceOptions{RedisAddress: "redis:6379", RedisPassword: &rayv1.RedisCredential{Value: "pw"}},
			wantArgs: []string{wantScript("")},
		},
		"with username": {
			ft:       &rayv1.GcsFaultToleranceOptions{RedisAddress: "redis:6379", RedisUsername: &rayv1.RedisCredential{Value: "u"}},
			wantArgs: []string{wantScript("username=os.getenv('REDIS_USERNAME', parsed.username), ")},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			job, err := BuildJob(newCluster(tc.ft), raypod.Options{HeadSidecarContainers: []corev1.Container{{Name: "logs"}}})
			if err != nil {
				t.Fatal(err)
			}
			spec := job.Spec.Template.Spec
			if len(spec.Containers) != 1 {
				t.Fatalf("containers = %d, want only the Ray container", len(spec.Containers))
			}
			ray := spec.Containers[0]
			small := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("200m"), corev1.ResourceMemory: resource.MustParse("256Mi")}
			env := map[string]string{}
			for _, e := range ray.Env {
				env[e.Name] = e.Value
			}
			got := map[string]any{
				"name":           job.Name,
				"namespace":      job.Namespace,
				"node type":      job.Labels[rayv1.LabelNodeType],
				"template type":  job.Spec.Template.Labels[rayv1.LabelNodeType],
				"cluster label":  job.Labels[rayv1.LabelCluster],
				"ft annotation":  job.Annotations[rayv1.AnnotationFTEnabled],
				"backoff":        *job.Spec.BackoffLimit,
				"deadline":       *job.Spec.ActiveDeadlineSeconds,
				"restart":        spec.RestartPolicy,
				"container":      ray.Name,
				"command":        ray.Command,
				"args":           ray.Args,
				"liveness nil":   ray.LivenessProbe == nil,
				"readiness nil":  ray.ReadinessProbe == nil,
				"resources":      ray.Resources,
				"retries":        env["RAY_redis_db_connect_retries"],
				"wait ms":        env["RAY_redis_db_connect_wait_milliseconds"],
				"redis address":  env[raypod.EnvRedisAddress],
				"storage ns":     env[raypod.EnvExternalStorageNamespace],
				"owner":          job.OwnerReferences[0].Name,
				"owner is ctrlr": *job.OwnerReferences[0].Controller,
			}
			want := map[string]any{
				"name":           "raycluster-redis-cleanup",
				"namespace":      "default",
				"node type":      "redis-cleanup",
				"template type":  "redis-cleanup",
				"cluster label":  "raycluster",
				"ft annotation":  "true",
				"backoff":        int32(0),
				"deadline":       int64(300),
				"restart":        corev1.RestartPolicyNever,
				"container":      "ray-head",
				"command":        []string{"/bin/bash", "-lc", "--"},
				"args":           tc.wantArgs,
				"liveness nil":   true,
				"readiness nil":  true,
				"resources":      corev1.ResourceRequirements{Limits: small, Requests: small},
				"retries":        "120",
				"wait ms":        "500",
				"redis address":  "redis:6379",
				"storage ns":     "uid-1",
				"owner":          "raycluster",
				"owner is ctrlr": true,
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if strings.Contains(ray.Args[0], "ray start") {
				t.Errorf("cleanup container still starts Ray: %q", ray.Args[0])
			}
		})
	}
}

func TestBuildJobInvalidHead(t *testing.T) {
	c := newCluster(nil)
	c.Spec.HeadGroupSpec.Template.Spec.Containers = nil
	if _, err := BuildJob(c, raypod.Options{}); err == nil {
		t.Error("want an error for a head without containers")
	}
}

// labelScheduler marks every Pod it sees, standing in for a batch scheduler.
type labelScheduler struct{}

func (labelScheduler) MutatePod(_ *rayv1.RayCluster, pod *corev1.Pod, _ string) {
	pod.Labels["scheduled-by"] = "gang"
}

// TestBuildJobSkipsBatchScheduler: KubeRay decorates Pods for the batch
// scheduler when it creates them, so the cleanup Job, built from the head
// template, carries no scheduler metadata.
func TestBuildJobSkipsBatchScheduler(t *testing.T) {
	ft := &rayv1.GcsFaultToleranceOptions{RedisAddress: "redis:6379"}
	job, err := BuildJob(newCluster(ft), raypod.Options{BatchScheduler: labelScheduler{}})
	if err != nil {
		t.Fatal(err)
	}
	got := []string{job.Labels["scheduled-by"], job.Spec.Template.Labels["scheduled-by"]}
	if diff := cmp.Diff([]string{"", ""}, got); diff != "" {
		t.Errorf("scheduler labels on Job, template (-want +got):\n%s", diff)
	}
}

// TestBuildJobWithoutTLSWait: with mutual TLS the cleanup Pod keeps the
// head's TLS mount and variables but not the IP SAN wait, whose IP no
// certificate names.
func TestBuildJobWithoutTLSWait(t *testing.T) {
	c := newCluster(&rayv1.GcsFaultToleranceOptions{RedisAddress: "redis:6379"})
	c.Spec.TLSOptions = &rayv1.TLSOptions{Enabled: ptr.To(true)}
	job, err := BuildJob(c, raypod.Options{MTLS: true})
	if err != nil {
		t.Fatal(err)
	}
	spec := job.Spec.Template.Spec
	for _, ic := range spec.InitContainers {
		if ic.Name == raypod.WaitForTLSIPSANName {
			t.Errorf("cleanup Pod has %s", ic.Name)
		}
	}
	if !slices.ContainsFunc(spec.Volumes, func(v corev1.Volume) bool { return v.Name == raypod.TLSVolumeName }) {
		t.Errorf("cleanup Pod lacks the TLS volume: %v", spec.Volumes)
	}
}
