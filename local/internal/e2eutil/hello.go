package e2eutil

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// The hello Serve application of the RayService upgrade tests (the
// cluster suite's and the soak's): a module shipped in a
// ConfigMap, mounted into the head and put on PYTHONPATH, that answers with
// the APP_VERSION of the Pod it runs in. Changing that variable in
// rayClusterConfig is the cluster change that starts the upgrade, and the
// answers show which cluster served each request.
const (
	HelloName       = "hello"
	HelloConfigMap  = "hello-app"
	helloModuleDir  = "/opt/serve-app"
	HelloModuleFile = "e2e_hello.py"
	HelloRoute      = "/hello"
	HelloServePort  = 8000
	HelloModule     = `import os

from ray import serve


@serve.deployment(ray_actor_options={"num_cpus": 0})
class Hello:
    def __call__(self, request):
        return os.environ.get("APP_VERSION", "unset")


app = Hello.bind()
`
	helloServeConfig = `applications:
  - name: hello
    import_path: e2e_hello:app
    route_prefix: /hello
    deployments:
      - name: Hello
        num_replicas: 1
        ray_actor_options:
          num_cpus: 0
`
)

// HelloDeletionDelay is the RayService's rayClusterDeletionDelaySeconds:
// the old cluster outlives the switch by this long, time enough for the
// endpoint change to reach kube-proxy (KubeRay's default, 60 s, would cost
// a test a minute).
const HelloDeletionDelay = 10

// HelloGracePeriod is the head Pods' terminationGracePeriodSeconds.
const HelloGracePeriod = 5

// HelloRayService is the RayService of the upgrade tests, its Pods saying
// version.
func HelloRayService(ns, version string) *rayv1.RayService {
	return &rayv1.RayService{
		ObjectMeta: metav1.ObjectMeta{Name: HelloName, Namespace: ns},
		Spec: rayv1.RayServiceSpec{
			UpgradeStrategy:                &rayv1.RayServiceUpgradeStrategy{Type: ptr.To(rayv1.RayServiceNewCluster)},
			RayClusterDeletionDelaySeconds: ptr.To[int32](HelloDeletionDelay),
			ServeConfigV2:                  helloServeConfig,
			RayClusterSpec: rayv1.RayClusterSpec{
				RayVersion: "2.60.0",
				HeadGroupSpec: rayv1.HeadGroupSpec{
					RayStartParams: map[string]string{},
					Template:       corev1.PodTemplateSpec{Spec: HelloHeadPod(version)},
				},
			},
		},
	}
}

// HelloHeadPod is the head's Pod spec: a small CPU request, so that two
// heads fit the two CPUs during the upgrade, and the module's ConfigMap.
// `ray start --block` does not exit on SIGTERM (KubeRay #503), so a Ray Pod
// lasts its whole grace period: a short one saves a test half a minute
// per cluster, and ends the old head sooner after the switch.
func HelloHeadPod(version string) corev1.PodSpec {
	return corev1.PodSpec{
		TerminationGracePeriodSeconds: ptr.To[int64](HelloGracePeriod),
		Containers: []corev1.Container{{
			Name:  "ray-head",
			Image: "rayproject/ray:2.60.0",
			Env: []corev1.EnvVar{
				{Name: "APP_VERSION", Value: version},
				{Name: "PYTHONPATH", Value: helloModuleDir},
			},
			Ports: []corev1.ContainerPort{
				{Name: "gcs-server", ContainerPort: 6379},
				{Name: "dashboard", ContainerPort: 8265},
				{Name: "client", ContainerPort: 10001},
				{Name: "serve", ContainerPort: HelloServePort},
			},
			Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("400m"), corev1.ResourceMemory: resource.MustParse("1Gi")},
				Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("2Gi")},
			},
			VolumeMounts: []corev1.VolumeMount{{Name: "serve-app", MountPath: helloModuleDir, ReadOnly: true}},
		}},
		Volumes: []corev1.Volume{{Name: "serve-app", VolumeSource: corev1.VolumeSource{
			ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: HelloConfigMap}},
		}}},
	}
}

// HelloIncremental makes rs upgrade with NewClusterWithIncrementalUpgrade
// through a Gateway of gatewayClass: 50 % of the traffic moved every 4 s,
// up to 100 % extra serving capacity during the upgrade. An incremental
// upgrade needs Ray's autoscaler (HelloAutoscaled).
func HelloIncremental(rs *rayv1.RayService, gatewayClass string) {
	// The old cluster loses its capacity an interval after it lost its
	// traffic; Traefik applies a route up to its providers' throttle (2 s)
	// after it is written. An interval of 4 s leaves it 2 s to spare.
	const incrementalInterval = 4
	rs.Spec.UpgradeStrategy = &rayv1.RayServiceUpgradeStrategy{
		Type: ptr.To(rayv1.RayServiceNewClusterWithIncrementalUpgrade),
		ClusterUpgradeOptions: &rayv1.ClusterUpgradeOptions{
			GatewayClassName: gatewayClass,
			StepSizePercent:  ptr.To[int32](50),
			IntervalSeconds:  ptr.To[int32](incrementalInterval),
			MaxSurgePercent:  ptr.To[int32](100),
		},
	}
	HelloAutoscaled(rs)
}

// HelloAutoscaled turns on Ray's autoscaler for rs's clusters, as an
// incremental upgrade requires, and gives them a worker group that never
// has a Pod: Ray's autoscaler reads the RayCluster's workerGroupSpecs and
// exits with a KeyError on a cluster without the field (a head-only
// cluster's JSON omits it), leaving the head's sidecar in back-off and the
// head Pod not Ready.
func HelloAutoscaled(rs *rayv1.RayService) {
	rs.Spec.RayClusterSpec.EnableInTreeAutoscaling = ptr.To(true)
	worker := HelloHeadPod("idle")
	worker.Containers[0].Name = "ray-worker"
	worker.Containers[0].Ports = nil
	rs.Spec.RayClusterSpec.WorkerGroupSpecs = []rayv1.WorkerGroupSpec{{
		GroupName:      "idle",
		Replicas:       ptr.To[int32](0),
		MinReplicas:    ptr.To[int32](0),
		MaxReplicas:    ptr.To[int32](0),
		RayStartParams: map[string]string{},
		Template:       corev1.PodTemplateSpec{Spec: worker},
	}}
}

// ServingOneCluster is nil when the status says what a user expects of a
// RayService serving from one cluster with no upgrade going on.
func ServingOneCluster(rs *rayv1.RayService) error {
	st := &rs.Status
	ready := meta.FindStatusCondition(st.Conditions, string(rayv1.RayServiceReady))
	upgrading := meta.FindStatusCondition(st.Conditions, string(rayv1.UpgradeInProgress))
	switch {
	case ready == nil || ready.Status != metav1.ConditionTrue || ready.Reason != string(rayv1.NonZeroServeEndpoints):
		return fmt.Errorf("condition Ready is %v", ready)
	case upgrading == nil || upgrading.Status != metav1.ConditionFalse || upgrading.Reason != string(rayv1.NoPendingCluster):
		return fmt.Errorf("UpgradeInProgress is %v", upgrading)
	case st.ServiceStatus != rayv1.Running:
		return fmt.Errorf("serviceStatus %q", st.ServiceStatus)
	case st.ActiveServiceStatus.RayClusterName == "" || st.PendingServiceStatus.RayClusterName != "":
		return fmt.Errorf("active cluster %q, pending %q", st.ActiveServiceStatus.RayClusterName, st.PendingServiceStatus.RayClusterName)
	case st.ObservedGeneration != rs.Generation:
		return fmt.Errorf("observedGeneration %d of generation %d", st.ObservedGeneration, rs.Generation)
	}
	return nil
}

// HelloApp is the ConfigMap that ships HelloModule to the heads.
func HelloApp(ns string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: HelloConfigMap, Namespace: ns},
		Data:       map[string]string{HelloModuleFile: HelloModule},
	}
}

// HelloServedBy is nil when the application and its deployment run on
// cluster, the active one, and the serve Service has one endpoint (the
// head).
func HelloServedBy(rs *rayv1.RayService, cluster string) error {
	st := &rs.Status
	app := st.ActiveServiceStatus.Applications[HelloName]
	switch {
	case st.ActiveServiceStatus.RayClusterName != cluster:
		return fmt.Errorf("active cluster %q, want %q", st.ActiveServiceStatus.RayClusterName, cluster)
	case app.Status != rayv1.ApplicationStatusRunning || app.Deployments["Hello"].Status != rayv1.DeploymentStatusHealthy:
		return fmt.Errorf("application %s on %s: %+v, want RUNNING with deployment Hello HEALTHY", HelloName, cluster, app)
	case st.NumServeEndpoints != 1:
		return fmt.Errorf("numServeEndpoints %d, want 1 (the head)", st.NumServeEndpoints)
	}
	return nil
}

// SetHelloHeadPod gives the hello RayService in ns the head Pod spec spec (a
// change of rayClusterConfig, which starts an upgrade), retrying on
// conflicts, and returns the RayService as updated.
func SetHelloHeadPod(ctx context.Context, c client.Client, ns string, spec corev1.PodSpec) (*rayv1.RayService, error) {
	return UpdateHello(ctx, c, ns, func(rs *rayv1.RayService) {
		rs.Spec.RayClusterSpec.HeadGroupSpec.Template.Spec = spec
	})
}

// UpdateHello applies change to the hello RayService in ns in one Update,
// retrying on conflicts, and returns the RayService as updated.
func UpdateHello(ctx context.Context, c client.Client, ns string, change func(*rayv1.RayService)) (*rayv1.RayService, error) {
	rs := &rayv1.RayService{}
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: HelloName}, rs); err != nil {
			return err
		}
		change(rs)
		return c.Update(ctx, rs)
	})
	return rs, err
}
