package validation

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-base/featuregate"
	"k8s.io/utils/ptr"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/features"
)

// gates is a FeatureGates backed by a set of enabled gates.
type gates map[featuregate.Feature]bool

func (g gates) Enabled(f featuregate.Feature) bool { return g[f] }

// validSpec returns a minimal valid spec with one worker group.
func validSpec() *rayv1.RayClusterSpec {
	container := func(name string) corev1.PodTemplateSpec {
		return corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: name, Image: "rayproject/ray:2.52.0"}}}}
	}
	return &rayv1.RayClusterSpec{
		RayVersion:    "2.52.0",
		HeadGroupSpec: rayv1.HeadGroupSpec{Template: container("ray-head"), RayStartParams: map[string]string{}},
		WorkerGroupSpecs: []rayv1.WorkerGroupSpec{{
			GroupName:   "small",
			Replicas:    ptr.To[int32](1),
			MinReplicas: ptr.To[int32](0),
			MaxReplicas: ptr.To[int32](5),
			Template:    container("ray-worker"),
		}},
	}
}

func TestRayClusterSpec(t *testing.T) {
	headEnv := func(s *rayv1.RayClusterSpec, name, value string) {
		c := &s.HeadGroupSpec.Template.Spec.Containers[0]
		c.Env = append(c.Env, corev1.EnvVar{Name: name, Value: value})
	}
	cases := map[string]struct {
		mutate      func(*rayv1.RayClusterSpec)
		annotations map[string]string
		gates       gates
		wantErr     string // substring; empty means valid
	}{
		"valid": {mutate: func(*rayv1.RayClusterSpec) {}},
		"replicas above max is clamped, not rejected": {mutate: func(s *rayv1.RayClusterSpec) { s.WorkerGroupSpecs[0].Replicas = ptr.To[int32](50) }},
		"head without containers": {
			mutate:  func(s *rayv1.RayClusterSpec) { s.HeadGroupSpec.Template.Spec.Containers = nil },
			wantErr: "headGroupSpec should have at least one container",
		},
		"worker without containers": {
			mutate:  func(s *rayv1.RayClusterSpec) { s.WorkerGroupSpecs[0].Template.Spec.Containers = nil },
			wantErr: "workerGroupSpec should have at least one container",
		},
		"duplicate group names": {
			mutate:  func(s *rayv1.RayClusterSpec) { s.WorkerGroupSpecs = append(s.WorkerGroupSpecs, s.WorkerGroupSpecs[0]) },
			wantErr: `worker group names must be unique: "small"`,
		},
		"head rayStartParams at the size limit": {
			mutate: func(s *rayv1.RayClusterSpec) {
				s.HeadGroupSpec.RayStartParams = map[string]string{"system-config": strings.Repeat("x", MaxRayStartParamsBytes-len("system-config"))}
			},
		},
		"head rayStartParams one byte over the size limit": {
			mutate: func(s *rayv1.RayClusterSpec) {
				s.HeadGroupSpec.RayStartParams = map[string]string{"system-config": strings.Repeat("x", MaxRayStartParamsBytes-len("system-config")+1)}
			},
			wantErr: "headGroupSpec.rayStartParams hold 65537 bytes of keys and values, more than 65536",
		},
		"worker rayStartParams over the size limit": {
			mutate: func(s *rayv1.RayClusterSpec) {
				s.WorkerGroupSpecs[0].RayStartParams = map[string]string{"a": strings.Repeat("x", 40<<10), "b": strings.Repeat("x", 30<<10)}
			},
			wantErr: `workerGroupSpecs["small"].rayStartParams hold 71682 bytes`,
		},
		"invalid group name": {
			mutate:  func(s *rayv1.RayClusterSpec) { s.WorkerGroupSpecs[0].GroupName = "bad name!" },
			wantErr: `worker group name "bad name!" must be a valid label value`,
		},
		"group name a label value but not part of a Pod name (found by FuzzRayService)": {
			mutate:  func(s *rayv1.RayClusterSpec) { s.WorkerGroupSpecs[0].GroupName = "0_0" },
			wantErr: `worker group name "0_0" cannot be part of its Pods' names`,
		},
		"group name with a dot next to a dash": {
			mutate:  func(s *rayv1.RayClusterSpec) { s.WorkerGroupSpecs[0].GroupName = "gpu.-a" },
			wantErr: `worker group name "gpu.-a" cannot be part of its Pods' names`,
		},
		"min greater than max": {
			mutate:  func(s *rayv1.RayClusterSpec) { s.WorkerGroupSpecs[0].MinReplicas = ptr.To[int32](6) },
			wantErr: "worker group small has minReplicas 6 greater than maxReplicas 5",
		},
		"negative min": {
			mutate:  func(s *rayv1.RayClusterSpec) { s.WorkerGroupSpecs[0].MinReplicas = ptr.To[int32](-1) },
			wantErr: "worker group small has negative minReplicas -1",
		},
		"missing bounds without autoscaling": {
			mutate:  func(s *rayv1.RayClusterSpec) { s.WorkerGroupSpecs[0].MaxReplicas = nil },
			wantErr: "worker group small must set both minReplicas and maxReplicas when autoscaling is disabled",
		},
		"missing bounds with autoscaling": {
			mutate: func(s *rayv1.RayClusterSpec) {
				s.EnableInTreeAutoscaling = ptr.To(true)
				s.WorkerGroupSpecs[0].MaxReplicas = nil
			},
		},
		"resources in both places": {
			mutate: func(s *rayv1.RayClusterSpec) {
				s.HeadGroupSpec.RayStartParams["num-cpus"] = "1"
				s.HeadGroupSpec.Resources = map[string]string{"CPU": "1"}
			},
			wantErr: "resource fields should not be set in both rayStartParams and Resources for Head group",
		},
		"labels in rayStartParams": {
			mutate: func(s *rayv1.RayClusterSpec) {
				s.WorkerGroupSpecs[0].RayStartParams = map[string]string{"labels": "a=b"}
			},
			wantErr: "rayStartParams['labels'] is not supported for small group",
		},
		"bad label value": {
			mutate:  func(s *rayv1.RayClusterSpec) { s.HeadGroupSpec.Labels = map[string]string{"ok": "bad value"} },
			wantErr: "invalid label value for key 'ok' in Head group: 'bad value'",
		},
		"ft annotation and options": {
			mutate: func(s *rayv1.RayClusterSpec) {
				s.GcsFaultToleranceOptions = &rayv1.GcsFaultToleranceOptions{RedisAddress: "redis:6379"}
			},
			annotations: map[string]string{rayv1.AnnotationFTEnabled: "true"},
			wantErr:     "ray.io/ft-enabled annotation and GcsFaultToleranceOptions are both set",
		},
		"redis address env without ft": {
			mutate:  func(s *rayv1.RayClusterSpec) { headEnv(s, "RAY_REDIS_ADDRESS", "redis:6379") },
			wantErr: "RAY_REDIS_ADDRESS is set which implicitly enables GCS fault tolerance",
		},
		"redis password in rayStartParams with ft options": {
			mutate: func(s *rayv1.RayClusterSpec) {
				s.GcsFaultToleranceOptions = &rayv1.GcsFaultToleranceOptions{RedisAddress: "redis:6379"}
				s.HeadGroupSpec.RayStartParams["redis-password"] = "x"
			},
			wantErr: "cannot set `redis-password` in rayStartParams",
		},
		"external storage annotation with ft options": {
			mutate: func(s *rayv1.RayClusterSpec) {
				s.GcsFaultToleranceOptions = &rayv1.GcsFaultToleranceOptions{RedisAddress: "redis:6379"}
			},
			annotations: map[string]string{rayv1.AnnotationExternalStorageNamespace: "ns"},
			wantErr:     "cannot set `ray.io/external-storage-namespace` annotation",
		},
		"rocksdb without gate": {
			mutate: func(s *rayv1.RayClusterSpec) {
				s.GcsFaultToleranceOptions = &rayv1.GcsFaultToleranceOptions{Backend: rayv1.GcsFTBackendRocksDB}
			},
			wantErr: "requires the GCSFaultToleranceEmbeddedStorage feature gate",
		},
		"rocksdb with redis address": {
			mutate: func(s *rayv1.RayClusterSpec) {
				s.GcsFaultToleranceOptions = &rayv1.GcsFaultToleranceOptions{Backend: rayv1.GcsFTBackendRocksDB, RedisAddress: "r:1"}
			},
			gates:   gates{features.GCSFaultToleranceEmbeddedStorage: true},
			wantErr: "cannot set GcsFaultToleranceOptions.RedisAddress when backend is 'rocksdb'",
		},
		"rocksdb with the storage env": {
			mutate: func(s *rayv1.RayClusterSpec) {
				s.GcsFaultToleranceOptions = &rayv1.GcsFaultToleranceOptions{Backend: rayv1.GcsFTBackendRocksDB}
				headEnv(s, "RAY_gcs_storage_path", "/x")
			},
			gates:   gates{features.GCSFaultToleranceEmbeddedStorage: true},
			wantErr: "cannot set `RAY_gcs_storage` or `RAY_gcs_storage_path` env var in head Pod when the embedded GCS FT backend is used",
		},
		"rocksdb with a mount at /data/gcs": {
			mutate: func(s *rayv1.RayClusterSpec) {
				s.GcsFaultToleranceOptions = &rayv1.GcsFaultToleranceOptions{Backend: rayv1.GcsFTBackendRocksDB}
				c := &s.HeadGroupSpec.Template.Spec.Containers[0]
				c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: "user-vol", MountPath: "/data/gcs"})
			},
			gates:   gates{features.GCSFaultToleranceEmbeddedStorage: true},
			wantErr: `cannot set a volume mount named "gcs-storage" or mounted at /data/gcs in the head container`,
		},
		"rocksdb with a mount named gcs-storage": {
			mutate: func(s *rayv1.RayClusterSpec) {
				s.GcsFaultToleranceOptions = &rayv1.GcsFaultToleranceOptions{Backend: rayv1.GcsFTBackendRocksDB}
				c := &s.HeadGroupSpec.Template.Spec.Containers[0]
				c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: "gcs-storage", MountPath: "/elsewhere"})
			},
			gates:   gates{features.GCSFaultToleranceEmbeddedStorage: true},
			wantErr: `cannot set a volume mount named "gcs-storage"`,
		},
		"rocksdb with a volume named gcs-storage": {
			mutate: func(s *rayv1.RayClusterSpec) {
				s.GcsFaultToleranceOptions = &rayv1.GcsFaultToleranceOptions{Backend: rayv1.GcsFTBackendRocksDB}
				s.HeadGroupSpec.Template.Spec.Volumes = append(s.HeadGroupSpec.Template.Spec.Volumes, corev1.Volume{Name: "gcs-storage"})
			},
			gates:   gates{features.GCSFaultToleranceEmbeddedStorage: true},
			wantErr: `cannot set a volume named "gcs-storage" in the head Pod`,
		},
		"rocksdb with gate": {
			mutate: func(s *rayv1.RayClusterSpec) {
				s.GcsFaultToleranceOptions = &rayv1.GcsFaultToleranceOptions{Backend: rayv1.GcsFTBackendRocksDB}
			},
			gates: gates{features.GCSFaultToleranceEmbeddedStorage: true},
		},
		"redis username env": {
			mutate:  func(s *rayv1.RayClusterSpec) { headEnv(s, "REDIS_USERNAME", "u") },
			wantErr: "cannot set redis username in rayStartParams or environment variables",
		},
		"suspended group without gate": {
			mutate:  func(s *rayv1.RayClusterSpec) { s.WorkerGroupSpecs[0].Suspend = ptr.To(true) },
			wantErr: "worker group small can be suspended only when the RayJobDeletionPolicy feature gate is enabled",
		},
		"suspended group with autoscaler": {
			mutate: func(s *rayv1.RayClusterSpec) {
				s.EnableInTreeAutoscaling = ptr.To(true)
				s.WorkerGroupSpecs[0].Suspend = ptr.To(true)
			},
			gates:   gates{features.RayJobDeletionPolicy: true},
			wantErr: "worker group small cannot be suspended with Autoscaler enabled",
		},
		"suspended group with gate": {
			mutate: func(s *rayv1.RayClusterSpec) { s.WorkerGroupSpecs[0].Suspend = ptr.To(true) },
			gates:  gates{features.RayJobDeletionPolicy: true},
		},
		"autoscaler v2 env without autoscaling": {
			mutate:  func(s *rayv1.RayClusterSpec) { headEnv(s, "RAY_enable_autoscaler_v2", "true") },
			wantErr: "environment variable RAY_enable_autoscaler_v2 cannot be set to 'true' when enableInTreeAutoscaling is false",
		},
		"autoscaler v2 with restartPolicy Always": {
			mutate: func(s *rayv1.RayClusterSpec) {
				s.EnableInTreeAutoscaling = ptr.To(true)
				s.AutoscalerOptions = &rayv1.AutoscalerOptions{Version: ptr.To(rayv1.AutoscalerVersionV2)}
				s.HeadGroupSpec.Template.Spec.RestartPolicy = corev1.RestartPolicyAlways
			},
			wantErr: "restartPolicy for head Pod should be Never or unset when using autoscaler V2",
		},
		"idle timeout without v2": {
			mutate: func(s *rayv1.RayClusterSpec) {
				s.RayVersion = "2.46.0"
				s.WorkerGroupSpecs[0].IdleTimeoutSeconds = ptr.To[int32](30)
			},
			wantErr: "worker group small: idleTimeoutSeconds is set, but autoscaler v2 is not enabled",
		},
		"idle timeout with a rayVersion past 2.47 but no version: KubeRay infers nothing": {
			mutate: func(s *rayv1.RayClusterSpec) {
				s.RayVersion = "2.52.0"
				s.EnableInTreeAutoscaling = ptr.To(true)
				s.WorkerGroupSpecs[0].IdleTimeoutSeconds = ptr.To[int32](30)
			},
			wantErr: "worker group small: idleTimeoutSeconds is set, but autoscaler v2 is not enabled",
		},
		"idle timeout with version v2": {
			mutate: func(s *rayv1.RayClusterSpec) {
				s.EnableInTreeAutoscaling = ptr.To(true)
				s.AutoscalerOptions = &rayv1.AutoscalerOptions{Version: ptr.To(rayv1.AutoscalerVersionV2)}
				s.WorkerGroupSpecs[0].IdleTimeoutSeconds = ptr.To[int32](30)
			},
		},
		"idle timeout with the head's v2 env": {
			mutate: func(s *rayv1.RayClusterSpec) {
				s.EnableInTreeAutoscaling = ptr.To(true)
				headEnv(s, "RAY_enable_autoscaler_v2", "1")
				s.WorkerGroupSpecs[0].IdleTimeoutSeconds = ptr.To[int32](30)
			},
		},
		"priority zero is no priority": {
			mutate: func(s *rayv1.RayClusterSpec) {
				s.RayVersion = ""
				s.WorkerGroupSpecs[0].Priority = ptr.To[int32](0)
			},
		},
		"priority without rayVersion": {
			mutate: func(s *rayv1.RayClusterSpec) {
				s.RayVersion = ""
				s.WorkerGroupSpecs[0].Priority = ptr.To[int32](2)
			},
			wantErr: "worker group small: priority is set, but RayVersion was not specified. Ray version 2.56.0 or later is required",
		},
		"priority with an unreadable rayVersion": {
			mutate: func(s *rayv1.RayClusterSpec) {
				s.RayVersion = "latest"
				s.WorkerGroupSpecs[0].Priority = ptr.To[int32](2)
			},
			wantErr: "worker group small: priority is set, but RayVersion format is invalid: latest",
		},
		"priority before Ray 2.56.0": {
			mutate: func(s *rayv1.RayClusterSpec) {
				s.RayVersion = "2.55.0"
				s.WorkerGroupSpecs[0].Priority = ptr.To[int32](2)
			},
			wantErr: "worker group small: priority is set, but minimum Ray version is 2.56.0, got 2.55.0",
		},
		"priority without autoscaler v2": {
			mutate: func(s *rayv1.RayClusterSpec) {
				s.RayVersion = "2.60.0"
				s.WorkerGroupSpecs[0].Priority = ptr.To[int32](-3)
			},
			wantErr: "worker group small: priority is set to -3, but autoscaler v2 is not enabled. Priority is only supported with autoscaler v2 enabled",
		},
		"priority with autoscaler v2": {
			mutate: func(s *rayv1.RayClusterSpec) {
				s.RayVersion = "2.60.0"
				s.EnableInTreeAutoscaling = ptr.To(true)
				s.AutoscalerOptions = &rayv1.AutoscalerOptions{Version: ptr.To(rayv1.AutoscalerVersionV2)}
				s.WorkerGroupSpecs[0].Priority = ptr.To[int32](5)
			},
		},
		"priority with the head's v2 env": {
			mutate: func(s *rayv1.RayClusterSpec) {
				s.RayVersion = "2.56.0"
				s.EnableInTreeAutoscaling = ptr.To(true)
				headEnv(s, "RAY_enable_autoscaler_v2", "true")
				s.WorkerGroupSpecs[0].Priority = ptr.To[int32](5)
			},
		},
		"negative autoscaler idle timeout": {
			mutate: func(s *rayv1.RayClusterSpec) {
				s.AutoscalerOptions = &rayv1.AutoscalerOptions{IdleTimeoutSeconds: ptr.To[int32](-1)}
			},
			wantErr: "autoscalerOptions.idleTimeoutSeconds must be non-negative, got -1",
		},
		"history server without gate": {
			mutate:  func(s *rayv1.RayClusterSpec) { s.HistoryServerOptions = &rayv1.HistoryServerOptions{} },
			wantErr: "RayClusterHistoryServer feature gate is not enabled",
		},
		"token auth on old ray": {
			mutate: func(s *rayv1.RayClusterSpec) {
				s.RayVersion = "2.51.0"
				s.AuthOptions = &rayv1.AuthOptions{Mode: rayv1.AuthModeToken}
			},
			wantErr: "authOptions.mode is 'token' but minimum Ray version is 2.52.0, got 2.51.0",
		},
		"token auth without ray version": {
			mutate: func(s *rayv1.RayClusterSpec) {
				s.RayVersion = ""
				s.AuthOptions = &rayv1.AuthOptions{Mode: rayv1.AuthModeToken}
			},
			wantErr: "authOptions.mode is 'token' but RayVersion was not specified",
		},
		"k8s token auth without token mode": {
			mutate: func(s *rayv1.RayClusterSpec) {
				s.AuthOptions = &rayv1.AuthOptions{Mode: rayv1.AuthModeDisabled, EnableK8sTokenAuth: ptr.To(true)}
			},
			wantErr: "authOptions.enableK8sTokenAuth is enabled but authOptions.mode not set to 'token'",
		},
		"network policy without gate": {
			mutate:  func(s *rayv1.RayClusterSpec) { s.NetworkPolicy = &rayv1.NetworkPolicyConfig{} },
			wantErr: "spec.networkPolicy requires the RayClusterNetworkPolicy feature gate to be enabled",
		},
		"network policy for unknown group": {
			mutate: func(s *rayv1.RayClusterSpec) {
				s.NetworkPolicy = &rayv1.NetworkPolicyConfig{WorkerGroups: []rayv1.WorkerGroupNetworkPolicyRules{{GroupName: "gpu"}}}
			},
			gates:   gates{features.RayClusterNetworkPolicy: true},
			wantErr: `networkPolicy.workerGroups["gpu"] does not match any group name in workerGroupSpecs`,
		},
		"network policy with gate, every kind of rule in DenyAll": {
			mutate: func(s *rayv1.RayClusterSpec) {
				rules := rayv1.NetworkPolicyRules{IngressRules: []networkingv1.NetworkPolicyIngressRule{{}}, EgressRules: []networkingv1.NetworkPolicyEgressRule{{}}}
				s.NetworkPolicy = &rayv1.NetworkPolicyConfig{Head: &rules, Worker: &rules,
					WorkerGroups: []rayv1.WorkerGroupNetworkPolicyRules{{GroupName: "small", NetworkPolicyRules: rules}}}
			},
			gates: gates{features.RayClusterNetworkPolicy: true},
		},
		"network policy head ingress under DenyAllEgress": {
			mutate: func(s *rayv1.RayClusterSpec) {
				s.NetworkPolicy = &rayv1.NetworkPolicyConfig{Mode: ptr.To(rayv1.NetworkPolicyDenyAllEgress),
					Head: &rayv1.NetworkPolicyRules{IngressRules: []networkingv1.NetworkPolicyIngressRule{{}}}}
			},
			gates:   gates{features.RayClusterNetworkPolicy: true},
			wantErr: `networkPolicy.head.ingressRules cannot be set when mode is "DenyAllEgress" (ingress is not restricted)`,
		},
		"network policy head egress under DenyAllIngress": {
			mutate: func(s *rayv1.RayClusterSpec) {
				s.NetworkPolicy = &rayv1.NetworkPolicyConfig{Mode: ptr.To(rayv1.NetworkPolicyDenyAllIngress),
					Head: &rayv1.NetworkPolicyRules{EgressRules: []networkingv1.NetworkPolicyEgressRule{{}}}}
			},
			gates:   gates{features.RayClusterNetworkPolicy: true},
			wantErr: `networkPolicy.head.egressRules cannot be set when mode is "DenyAllIngress" (egress is not restricted)`,
		},
		"network policy worker ingress under DenyAllEgress": {
			mutate: func(s *rayv1.RayClusterSpec) {
				s.NetworkPolicy = &rayv1.NetworkPolicyConfig{Mode: ptr.To(rayv1.NetworkPolicyDenyAllEgress),
					Worker: &rayv1.NetworkPolicyRules{IngressRules: []networkingv1.NetworkPolicyIngressRule{{}}}}
			},
			gates:   gates{features.RayClusterNetworkPolicy: true},
			wantErr: `networkPolicy.worker.ingressRules cannot be set when mode is "DenyAllEgress" (ingress is not restricted)`,
		},
		"network policy worker egress under DenyAllIngress": {
			mutate: func(s *rayv1.RayClusterSpec) {
				s.NetworkPolicy = &rayv1.NetworkPolicyConfig{Mode: ptr.To(rayv1.NetworkPolicyDenyAllIngress),
					Worker: &rayv1.NetworkPolicyRules{EgressRules: []networkingv1.NetworkPolicyEgressRule{{}}}}
			},
			gates:   gates{features.RayClusterNetworkPolicy: true},
			wantErr: `networkPolicy.worker.egressRules cannot be set when mode is "DenyAllIngress" (egress is not restricted)`,
		},
		"network policy group ingress under DenyAllEgress": {
			mutate: func(s *rayv1.RayClusterSpec) {
				s.NetworkPolicy = &rayv1.NetworkPolicyConfig{Mode: ptr.To(rayv1.NetworkPolicyDenyAllEgress),
					WorkerGroups: []rayv1.WorkerGroupNetworkPolicyRules{{GroupName: "small",
						NetworkPolicyRules: rayv1.NetworkPolicyRules{IngressRules: []networkingv1.NetworkPolicyIngressRule{{}}}}}}
			},
			gates:   gates{features.RayClusterNetworkPolicy: true},
			wantErr: `networkPolicy.workerGroups["small"].ingressRules cannot be set when mode is "DenyAllEgress" (ingress is not restricted)`,
		},
		"network policy group egress under DenyAllIngress": {
			mutate: func(s *rayv1.RayClusterSpec) {
				s.NetworkPolicy = &rayv1.NetworkPolicyConfig{Mode: ptr.To(rayv1.NetworkPolicyDenyAllIngress),
					WorkerGroups: []rayv1.WorkerGroupNetworkPolicyRules{{GroupName: "small",
						NetworkPolicyRules: rayv1.NetworkPolicyRules{EgressRules: []networkingv1.NetworkPolicyEgressRule{{}}}}}}
			},
			gates:   gates{features.RayClusterNetworkPolicy: true},
			wantErr: `networkPolicy.workerGroups["small"].egressRules cannot be set when mode is "DenyAllIngress" (egress is not restricted)`,
		},
		"network policy with a group name that is no DNS-1123 label": {
			mutate: func(s *rayv1.RayClusterSpec) {
				s.WorkerGroupSpecs[0].GroupName = "small.group"
				s.NetworkPolicy = &rayv1.NetworkPolicyConfig{}
			},
			gates:   gates{features.RayClusterNetworkPolicy: true},
			wantErr: `worker group name "small.group" must be a valid DNS1123 label when networkPolicy is enabled (it is embedded in the NetworkPolicy name)`,
		},
		"the same group name is fine without network policy": {
			mutate: func(s *rayv1.RayClusterSpec) { s.WorkerGroupSpecs[0].GroupName = "small.group" },
		},
		"tls without gate": {
			mutate:  func(s *rayv1.RayClusterSpec) { s.TLSOptions = &rayv1.TLSOptions{Enabled: ptr.To(true)} },
			wantErr: "spec.tlsOptions requires the RayClusterMTLS feature gate to be enabled",
		},
		"tls env set by user": {
			mutate: func(s *rayv1.RayClusterSpec) {
				s.TLSOptions = &rayv1.TLSOptions{Enabled: ptr.To(true)}
				headEnv(s, "RAY_USE_TLS", "1")
			},
			gates:   gates{features.RayClusterMTLS: true},
			wantErr: "cannot set RAY_USE_TLS environment variable in head Pod when tlsOptions is set",
		},
		"tls certificate path mounted by user in a worker group": {
			mutate: func(s *rayv1.RayClusterSpec) {
				s.TLSOptions = &rayv1.TLSOptions{Enabled: ptr.To(true)}
				c := &s.WorkerGroupSpecs[0].Template.Spec.Containers[0]
				c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: "certs", MountPath: "/etc/ray/tls"})
			},
			gates: gates{features.RayClusterMTLS: true},
			wantErr: `cannot use volume mount at path "/etc/ray/tls" in worker group "` + validSpec().WorkerGroupSpecs[0].GroupName +
				`" when tlsOptions is set - the operator manages TLS configuration automatically`,
		},
		"tls volume name mounted by user in the head": {
			mutate: func(s *rayv1.RayClusterSpec) {
				s.TLSOptions = &rayv1.TLSOptions{Enabled: ptr.To(true)}
				c := &s.HeadGroupSpec.Template.Spec.Containers[0]
				c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: "ray-tls", MountPath: "/certs"})
			},
			gates:   gates{features.RayClusterMTLS: true},
			wantErr: `cannot use volume mount named "ray-tls" in head Pod when tlsOptions is set - the operator manages TLS configuration automatically`,
		},
		"tls env in autoscaler options": {
			mutate: func(s *rayv1.RayClusterSpec) {
				s.TLSOptions = &rayv1.TLSOptions{Enabled: ptr.To(true)}
				s.AutoscalerOptions = &rayv1.AutoscalerOptions{Env: []corev1.EnvVar{{Name: "RAY_TLS_CA_CERT", Value: "x"}}}
			},
			gates: gates{features.RayClusterMTLS: true},
			wantErr: "cannot set RAY_TLS_CA_CERT environment variable in autoscalerOptions.env when tlsOptions is set " +
				"- the operator manages TLS configuration for the autoscaler automatically",
		},
		"tls mount in autoscaler options": {
			mutate: func(s *rayv1.RayClusterSpec) {
				s.TLSOptions = &rayv1.TLSOptions{Enabled: ptr.To(true)}
				s.AutoscalerOptions = &rayv1.AutoscalerOptions{VolumeMounts: []corev1.VolumeMount{{Name: "x", MountPath: "/etc/ray/tls"}}}
			},
			gates:   gates{features.RayClusterMTLS: true},
			wantErr: `cannot use volume mount at path "/etc/ray/tls" in autoscalerOptions.volumeMounts when tlsOptions is set`,
		},
		"tls env set by user with tlsOptions disabled": {
			mutate: func(s *rayv1.RayClusterSpec) {
				s.TLSOptions = &rayv1.TLSOptions{Enabled: ptr.To(false)}
				headEnv(s, "RAY_USE_TLS", "1")
			},
			gates: gates{features.RayClusterMTLS: true},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			spec := validSpec()
			tc.mutate(spec)
			err := RayClusterSpec(spec, tc.annotations, tc.gates)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("RayClusterSpec() = %v, want nil", err)
			case tc.wantErr != "" && err == nil:
				t.Fatalf("RayClusterSpec() = nil, want error containing %q", tc.wantErr)
			case tc.wantErr != "" && !strings.Contains(err.Error(), tc.wantErr):
				t.Fatalf("RayClusterSpec() = %q, want it to contain %q", err, tc.wantErr)
			}
		})
	}
}

func TestRayClusterMetadata(t *testing.T) {
	cases := map[string]struct {
		name    string
		wantErr string
	}{
		"valid":     {name: "raycluster-sample"},
		"too long":  {name: strings.Repeat("a", 54), wantErr: "RayCluster name should be no more than 53 characters"},
		"max":       {name: strings.Repeat("a", 53)},
		"uppercase": {name: "RayCluster", wantErr: "RayCluster name should be a valid DNS1035 label"},
		"digit":     {name: "1cluster", wantErr: "RayCluster name should be a valid DNS1035 label"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			checkErr(t, RayClusterMetadata(metav1.ObjectMeta{Name: tc.name}), tc.wantErr)
		})
	}
}

func TestRayClusterUpgradeOptions(t *testing.T) {
	cases := map[string]struct {
		typ     rayv1.RayClusterUpgradeType
		creator string
		wantErr string
	}{
		"recreate":                 {typ: rayv1.RayClusterRecreate},
		"none":                     {typ: rayv1.RayClusterUpgradeNone},
		"unknown":                  {typ: "Rolling", wantErr: "Spec.UpgradeStrategy.Type value Rolling is invalid, valid options are Recreate, None or RollingUpdate"},
		"rolling update":           {typ: rayv1.RayClusterRollingUpdate},
		"rolling update by RayJob": {typ: rayv1.RayClusterRollingUpdate, creator: "RayJob", wantErr: "upgradeStrategy cannot be set when RayCluster is created by RayJob"},
		"created by RayJob":        {typ: rayv1.RayClusterRecreate, creator: "RayJob", wantErr: "upgradeStrategy cannot be set when RayCluster is created by RayJob"},
		"created by RayService":    {typ: rayv1.RayClusterUpgradeNone, creator: "RayService", wantErr: "upgradeStrategy cannot be set when RayCluster is created by RayService"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rc := &rayv1.RayCluster{Spec: rayv1.RayClusterSpec{UpgradeStrategy: &rayv1.RayClusterUpgradeStrategy{Type: ptr.To(tc.typ)}}}
			if tc.creator != "" {
				rc.Labels = map[string]string{rayv1.LabelOriginatedFromCRD: tc.creator}
			}
			checkErr(t, RayClusterUpgradeOptions(rc), tc.wantErr)
		})
	}
}

func TestRayClusterStatus(t *testing.T) {
	cond := func(t rayv1.RayClusterConditionType, s metav1.ConditionStatus) metav1.Condition {
		return metav1.Condition{Type: string(t), Status: s}
	}
	cases := map[string]struct {
		conditions []metav1.Condition
		wantErr    string
	}{
		"none":       {},
		"suspending": {conditions: []metav1.Condition{cond(rayv1.RayClusterSuspending, metav1.ConditionTrue), cond(rayv1.RayClusterSuspended, metav1.ConditionFalse)}},
		"both": {
			conditions: []metav1.Condition{cond(rayv1.RayClusterSuspending, metav1.ConditionTrue), cond(rayv1.RayClusterSuspended, metav1.ConditionTrue)},
			wantErr:    "conditions should not be both true",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			checkErr(t, RayClusterStatus(&rayv1.RayClusterStatus{Conditions: tc.conditions}), tc.wantErr)
		})
	}
}

func checkErr(t *testing.T, err error, want string) {
	t.Helper()
	if want == "" {
		if err != nil {
			t.Fatalf("got error %v, want nil", err)
		}
		return
	}
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("got error %v, want one containing %q", err, want)
	}
}
