package api

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/testing/testenv"
)

// podTemplate is a Pod template whose metadata must survive the trip: the
// CRDs are generated with embedded ObjectMeta, so labels and annotations of
// pod templates are kept instead of pruned.
func podTemplate(container string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{
			Labels:      map[string]string{"team": "ml", "tier": container},
			Annotations: map[string]string{"example.com/note": "kept"},
		},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{
				Name:  container,
				Image: "rayproject/ray:2.52.0",
				Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{
						corev1.ResourceCPU:    resource.MustParse("1"),
						corev1.ResourceMemory: resource.MustParse("2Gi"),
					},
				},
			}},
		},
	}
}

// fullClusterSpec sets every RayClusterSpec field, leaving out only those
// whose defaults the test asserts (see clusterDefaults).
func fullClusterSpec() rayv1.RayClusterSpec {
	return rayv1.RayClusterSpec{
		UpgradeStrategy: &rayv1.RayClusterUpgradeStrategy{Type: ptr.To(rayv1.RayClusterRecreate)},
		AuthOptions: &rayv1.AuthOptions{
			EnableK8sTokenAuth: ptr.To(false),
			SecretName:         ptr.To("ray-token"),
			Mode:               rayv1.AuthModeToken,
		},
		Suspend:   ptr.To(false),
		ManagedBy: ptr.To("ray.io/kuberay-operator"),
		AutoscalerOptions: &rayv1.AutoscalerOptions{
			Image:              ptr.To("rayproject/ray:2.52.0"),
			ImagePullPolicy:    ptr.To(corev1.PullIfNotPresent),
			IdleTimeoutSeconds: ptr.To[int32](90),
			UpscalingMode:      ptr.To(rayv1.UpscalingModeConservative),
			Version:            ptr.To(rayv1.AutoscalerVersionV2),
			Env:                []corev1.EnvVar{{Name: "A", Value: "b"}},
			Command:            []string{"ray"},
			Args:               []string{"kuberay-autoscaler"},
		},
		HeadServiceAnnotations:  map[string]string{"a": "b"},
		EnableInTreeAutoscaling: ptr.To(true),
		GcsFaultToleranceOptions: &rayv1.GcsFaultToleranceOptions{
			Backend:                  rayv1.GcsFTBackendRedis,
			RedisAddress:             "redis:6379",
			ExternalStorageNamespace: "ns",
			RedisUsername:            &rayv1.RedisCredential{Value: "default"},
			RedisPassword: &rayv1.RedisCredential{ValueFrom: &corev1.EnvVarSource{
				SecretKeyRef: &corev1.SecretKeySelector{
					LocalObjectReference: corev1.LocalObjectReference{Name: "redis"},
					Key:                  "password",
				},
			}},
			Storage: &rayv1.GcsEmbeddedStorage{
				Size:           ptr.To(resource.MustParse("2Gi")),
				AccessModes:    []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				SubPath:        "gcs",
				DeletionPolicy: ptr.To(rayv1.RetainGCSStorageDeletionPolicy),
			},
		},
		HistoryServerOptions: &rayv1.HistoryServerOptions{CollectorOptions: &rayv1.CollectorOptions{
			Image: ptr.To("example.com/collector:1"),
		}},
		NetworkPolicy: &rayv1.NetworkPolicyConfig{
			Mode: ptr.To(rayv1.NetworkPolicyDenyAllIngress),
			WorkerGroups: []rayv1.WorkerGroupNetworkPolicyRules{{
				GroupName: "cpu",
				NetworkPolicyRules: rayv1.NetworkPolicyRules{
					EgressRules: []networkingv1.NetworkPolicyEgressRule{{}},
				},
			}},
		},
		TLSOptions: &rayv1.TLSOptions{Enabled: ptr.To(false)},
		HeadGroupSpec: rayv1.HeadGroupSpec{
			Template:      podTemplate("ray-head"),
			EnableIngress: ptr.To(true),
			IngressOptions: &rayv1.IngressOptions{
				Host:     ptr.To("ray.example.com"),
				Path:     ptr.To("/"),
				PathType: ptr.To(rayv1.IngressPathTypePrefix),
			},
			HeadService: &corev1.Service{
				ObjectMeta: metav1.ObjectMeta{Name: "custom-head", Labels: map[string]string{"x": "y"}},
			},
			Resources:      map[string]string{"custom": "1"},
			Labels:         map[string]string{"zone": "a"},
			RayStartParams: map[string]string{"num-cpus": "0"},
			ServiceType:    corev1.ServiceTypeNodePort,
		},
		RayVersion: "2.52.0",
		WorkerGroupSpecs: []rayv1.WorkerGroupSpec{{
			Suspend:            ptr.To(false),
			GroupName:          "cpu",
			Replicas:           ptr.To[int32](2),
			MinReplicas:        ptr.To[int32](1),
			MaxReplicas:        ptr.To[int32](5),
			IdleTimeoutSeconds: ptr.To[int32](30),
			Priority:           ptr.To[int32](7),
			Resources:          map[string]string{"custom": "2"},
			Labels:             map[string]string{"zone": "b"},
			RayStartParams:     map[string]string{},
			Template:           podTemplate("ray-worker"),
			ScaleStrategy:      rayv1.ScaleStrategy{WorkersToDelete: []string{"w-1"}},
			NumOfHosts:         2,
		}, {
			// Only the required fields: the others are defaulted.
			GroupName: "sparse",
			Template:  podTemplate("ray-worker"),
		}},
	}
}

// clusterDefaults is what the API server adds to fullClusterSpec.
func clusterDefaults(spec *rayv1.RayClusterSpec) {
	sparse := &spec.WorkerGroupSpecs[1]
	sparse.Replicas = ptr.To[int32](0)
	sparse.MinReplicas = ptr.To[int32](0)
	sparse.MaxReplicas = ptr.To[int32](2147483647)
	sparse.Priority = ptr.To[int32](0)
	sparse.NumOfHosts = 1
}

// diff is cmp.Diff that compares quantities and times by value, as the API
// server normalises their text forms.
func diff(want, got any) string {
	return cmp.Diff(want, got,
		cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 }),
		cmp.Comparer(func(a, b metav1.Time) bool { return a.Equal(&b) }),
	)
}

func now() metav1.Time { return metav1.NewTime(time.Now().Truncate(time.Second).UTC()) }

func fullClusterStatus(ts metav1.Time) rayv1.RayClusterStatus {
	return rayv1.RayClusterStatus{
		State:                   rayv1.Ready,
		DesiredCPU:              resource.MustParse("3"),
		DesiredMemory:           resource.MustParse("6Gi"),
		DesiredGPU:              resource.MustParse("0"),
		DesiredTPU:              resource.MustParse("0"),
		LastUpdateTime:          &ts,
		StateTransitionTimes:    map[rayv1.ClusterState]*metav1.Time{rayv1.Ready: &ts},
		Endpoints:               map[string]string{"dashboard": "8265"},
		Head:                    rayv1.HeadInfo{PodIP: "10.0.0.1", ServiceIP: "10.1.0.1", PodName: "h", ServiceName: "s"},
		Reason:                  "ok",
		Conditions:              []metav1.Condition{{Type: string(rayv1.HeadPodReady), Status: metav1.ConditionTrue, Reason: rayv1.HeadPodRunningAndReady, LastTransitionTime: ts}},
		ReadyWorkerReplicas:     2,
		AvailableWorkerReplicas: 2,
		DesiredWorkerReplicas:   4,
		MinWorkerReplicas:       2,
		MaxWorkerReplicas:       10,
		ObservedGeneration:      1,
	}
}

// roundTrip creates obj, writes status through the status subresource, and
// reads the object back into got.
func roundTrip(t *testing.T, env *testenv.Env, obj client.Object, setStatus func(), got client.Object) {
	t.Helper()
	if err := env.Client.Create(t.Context(), obj, strict); err != nil {
		t.Fatalf("creating: %v", err)
	}
	if setStatus != nil {
		setStatus()
		if err := env.Client.Status().Update(t.Context(), obj); err != nil {
			t.Fatalf("updating status: %v", err)
		}
	}
	if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(obj), got); err != nil {
		t.Fatalf("reading back: %v", err)
	}
}

func TestRayClusterRoundTrip(t *testing.T) {
	env := testenv.Shared(t)
	ns := env.Namespace(t)
	sent := &rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Name: "rt", Namespace: ns}, Spec: fullClusterSpec()}
	want := sent.DeepCopy()
	clusterDefaults(&want.Spec)
	status := fullClusterStatus(now())
	want.Status = *status.DeepCopy()

	got := &rayv1.RayCluster{}
	roundTrip(t, env, sent, func() { sent.Status = status }, got)
	if diff := diff(want.Spec, got.Spec); diff != "" {
		t.Errorf("spec after round trip (-want +got):\n%s", diff)
	}
	if diff := diff(want.Status, got.Status); diff != "" {
		t.Errorf("status after round trip (-want +got):\n%s", diff)
	}
}

func TestRayJobRoundTrip(t *testing.T) {
	env := testenv.Shared(t)
	ns := env.Namespace(t)
	cluster := fullClusterSpec()
	sent := &rayv1.RayJob{
		ObjectMeta: metav1.ObjectMeta{Name: "rt", Namespace: ns},
		Spec: rayv1.RayJobSpec{
			ActiveDeadlineSeconds: ptr.To[int32](3600),
			RayClusterSpec:        &cluster,
			SubmitterPodTemplate:  ptr.To(podTemplate("submitter")),
			Metadata:              map[string]string{"k": "v"},
			SubmitterConfig:       &rayv1.SubmitterConfig{BackoffLimit: ptr.To[int32](3)},
			ManagedBy:             ptr.To(rayv1.MultiKueueController),
			DeletionStrategy: &rayv1.DeletionStrategy{DeletionRules: []rayv1.DeletionRule{
				{Policy: rayv1.DeleteWorkers, Condition: rayv1.DeletionCondition{JobStatus: ptr.To(rayv1.JobStatusSucceeded), TTLSeconds: 10}},
				// TTLSeconds omitted: defaulted to 0, which is also Go's zero value.
				{Policy: rayv1.DeleteSelf, Condition: rayv1.DeletionCondition{JobDeploymentStatus: ptr.To(rayv1.JobDeploymentStatusFailed)}},
			}},
			Entrypoint:                "python main.py",
			RuntimeEnvYAML:            "pip: [requests]\n",
			JobID:                     "job-1",
			EntrypointResources:       `{"slot": 1}`,
			EntrypointNumCpus:         0.5,
			EntrypointNumGpus:         0.25,
			PreRunningDeadlineSeconds: ptr.To[int32](600),
			Suspend:                   true,
		},
	}
	want := sent.DeepCopy()
	clusterDefaults(want.Spec.RayClusterSpec)
	want.Spec.BackoffLimit = ptr.To[int32](0)
	want.Spec.SubmissionMode = rayv1.K8sJobMode
	ts := now()
	status := rayv1.RayJobStatus{
		RayJobStatusInfo:    rayv1.RayJobStatusInfo{StartTime: &ts},
		JobID:               "job-1",
		RayClusterName:      "rt-abc",
		DashboardURL:        "rt-head-svc:8265",
		JobStatus:           rayv1.JobStatusRunning,
		JobDeploymentStatus: rayv1.JobDeploymentStatusRunning,
		Reason:              rayv1.PreRunningDeadlineExceeded,
		Message:             "m",
		StartTime:           &ts,
		RayClusterStatus:    fullClusterStatus(ts),
		ObservedGeneration:  1,
	}
	want.Status = *status.DeepCopy()
	want.Status.Succeeded = ptr.To[int32](0) // status defaults
	want.Status.Failed = ptr.To[int32](0)

	got := &rayv1.RayJob{}
	roundTrip(t, env, sent, func() { sent.Status = status }, got)
	if diff := diff(want.Spec, got.Spec); diff != "" {
		t.Errorf("spec after round trip (-want +got):\n%s", diff)
	}
	if diff := diff(want.Status, got.Status); diff != "" {
		t.Errorf("status after round trip (-want +got):\n%s", diff)
	}
}

func TestRayServiceRoundTrip(t *testing.T) {
	env := testenv.Shared(t)
	ns := env.Namespace(t)
	sent := &rayv1.RayService{
		ObjectMeta: metav1.ObjectMeta{Name: "rt", Namespace: ns},
		Spec: rayv1.RayServiceSpec{
			RayClusterDeletionDelaySeconds:     ptr.To[int32](30),
			ServiceUnhealthySecondThreshold:    ptr.To[int32](900),
			DeploymentUnhealthySecondThreshold: ptr.To[int32](300),
			ServeService: &corev1.Service{
				ObjectMeta: metav1.ObjectMeta{Name: "serve", Annotations: map[string]string{"a": "b"}},
				Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP},
			},
			UpgradeStrategy: &rayv1.RayServiceUpgradeStrategy{
				Type: ptr.To(rayv1.RayServiceNewClusterWithIncrementalUpgrade),
				ClusterUpgradeOptions: &rayv1.ClusterUpgradeOptions{
					StepSizePercent:  ptr.To[int32](10),
					IntervalSeconds:  ptr.To[int32](20),
					GatewayClassName: "istio",
				},
			},
			ManagedBy:                  ptr.To("ray.io/kuberay-operator"),
			ServeConfigV2:              "applications: []\n",
			RayClusterSpec:             fullClusterSpec(),
			ExcludeHeadPodFromServeSvc: true,
			Suspend:                    true,
		},
	}
	want := sent.DeepCopy()
	clusterDefaults(&want.Spec.RayClusterSpec)
	want.Spec.UpgradeStrategy.ClusterUpgradeOptions.MaxSurgePercent = ptr.To[int32](100)
	ts := now()
	status := rayv1.RayServiceStatuses{
		Conditions:     []metav1.Condition{{Type: string(rayv1.RayServiceReady), Status: metav1.ConditionTrue, Reason: string(rayv1.NonZeroServeEndpoints), LastTransitionTime: ts}},
		LastUpdateTime: &ts,
		ServiceStatus:  rayv1.Running,
		ActiveServiceStatus: rayv1.RayServiceStatus{
			Applications: map[string]rayv1.AppStatus{"app": {
				Status:      rayv1.ApplicationStatusRunning,
				Deployments: map[string]rayv1.ServeDeploymentStatus{"d": {Status: rayv1.DeploymentStatusHealthy}},
			}},
			TargetCapacity:          ptr.To[int32](100),
			TrafficRoutedPercent:    ptr.To[int32](100),
			LastTrafficMigratedTime: &ts,
			RayClusterName:          "rt-a",
			RayClusterStatus:        fullClusterStatus(ts),
		},
		PendingServiceStatus: rayv1.RayServiceStatus{RayClusterName: "rt-b"},
		NumServeEndpoints:    3,
		ObservedGeneration:   1,
	}
	want.Status = *status.DeepCopy()

	got := &rayv1.RayService{}
	roundTrip(t, env, sent, func() { sent.Status = status }, got)
	if diff := diff(want.Spec, got.Spec); diff != "" {
		t.Errorf("spec after round trip (-want +got):\n%s", diff)
	}
	if diff := diff(want.Status, got.Status); diff != "" {
		t.Errorf("status after round trip (-want +got):\n%s", diff)
	}
}

func TestRayCronJobRoundTrip(t *testing.T) {
	env := testenv.Shared(t)
	ns := env.Namespace(t)
	cluster := fullClusterSpec()
	sent := &rayv1.RayCronJob{
		ObjectMeta: metav1.ObjectMeta{Name: "rt", Namespace: ns},
		Spec: rayv1.RayCronJobSpec{
			Schedule:                   "@hourly",
			TimeZone:                   ptr.To("Asia/Tokyo"),
			Suspend:                    true,
			ConcurrencyPolicy:          rayv1.ForbidConcurrent,
			StartingDeadlineSeconds:    ptr.To[int64](300),
			SuccessfulJobsHistoryLimit: ptr.To[int32](3),
			FailedJobsHistoryLimit:     ptr.To[int32](1),
			JobTemplate: rayv1.RayJobSpec{
				Entrypoint:               "python main.py",
				RayClusterSpec:           &cluster,
				ShutdownAfterJobFinishes: true,
				TTLSecondsAfterFinished:  60,
				SubmissionMode:           rayv1.HTTPMode,
				DeletionStrategy: &rayv1.DeletionStrategy{
					OnSuccess: &rayv1.DeletionPolicy{Policy: ptr.To(rayv1.DeleteCluster)},
					OnFailure: &rayv1.DeletionPolicy{Policy: ptr.To(rayv1.DeleteNone)},
				},
			},
		},
	}
	want := sent.DeepCopy()
	clusterDefaults(want.Spec.JobTemplate.RayClusterSpec)
	want.Spec.JobTemplate.BackoffLimit = ptr.To[int32](0)
	ts := now()
	status := rayv1.RayCronJobStatus{
		LastScheduleTime:   &ts,
		LastSuccessfulTime: &ts,
		Active:             []corev1.ObjectReference{{APIVersion: "ray.io/v1", Kind: "RayJob", Namespace: ns, Name: "rt-29000000", UID: "u-1"}},
		Conditions: []metav1.Condition{{Type: string(rayv1.RayCronJobSpecValid), Status: metav1.ConditionTrue,
			Reason: "Validated", Message: "", ObservedGeneration: 1, LastTransitionTime: ts}},
	}
	want.Status = *status.DeepCopy()

	got := &rayv1.RayCronJob{}
	roundTrip(t, env, sent, func() { sent.Status = *status.DeepCopy() }, got)
	if diff := diff(want.Spec, got.Spec); diff != "" {
		t.Errorf("spec after round trip (-want +got):\n%s", diff)
	}
	if diff := diff(want.Status, got.Status); diff != "" {
		t.Errorf("status after round trip (-want +got):\n%s", diff)
	}
}
