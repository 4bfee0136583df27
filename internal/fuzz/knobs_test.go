package fuzz

import (
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// FuzzRayClusterKnobs reaches deeper than byte-level JSON mutation: it puts
// fuzzed values into the fields the builders branch on (names, replica
// counts, hosts, rayStartParams, ports, env, annotations, Ray version) of a
// valid cluster, then checks the same properties as FuzzRayCluster.
func FuzzRayClusterKnobs(f *testing.F) {
	f.Add("raycluster", "workers", int32(1), int32(1), "num-cpus", "2", "dashboard", int32(8265), "MY_ENV", "ray.io/ft-enabled", "false", "2.52.0", true)
	f.Add("a-very-long-cluster-name-that-is-close-to-the-limit-x", "g", int32(3), int32(2), "dashboard-port", "9000", "", int32(0), "RAY_REDIS_ADDRESS", "ray.io/overwrite-container-cmd", "true", "2.60.0", false)
	f.Add("c", "multi-host-group", int32(0), int32(4), "block", "true", "serve", int32(8000), "A", "ray.io/enable-serve-service", "true", "", true)
	f.Fuzz(func(t *testing.T, name, group string, replicas, hosts int32, paramKey, paramValue, portName string, port int32,
		envName, annotationKey, annotationValue, rayVersion string, autoscale bool) {
		rc := knobCluster(name, group, replicas, hosts, rayVersion, autoscale)
		rc.Spec.HeadGroupSpec.RayStartParams[paramKey] = paramValue
		rc.Spec.WorkerGroupSpecs[0].RayStartParams[paramKey] = paramValue
		head := &rc.Spec.HeadGroupSpec.Template.Spec.Containers[0]
		if portName != "" || port != 0 {
			head.Ports = append(head.Ports, corev1.ContainerPort{Name: portName, ContainerPort: port})
		}
		if envName != "" {
			head.Env = append(head.Env, corev1.EnvVar{Name: envName, Value: paramValue})
		}
		rc.Annotations = map[string]string{annotationKey: annotationValue}
		// Round-trip through JSON, as the API server would store it.
		data, err := json.Marshal(rc)
		if err != nil {
			t.Fatal(err)
		}
		stored := &rayv1.RayCluster{}
		if err := json.Unmarshal(data, stored); err != nil {
			t.Fatal(err)
		}
		if err := validateCluster(stored); err != nil {
			requireNamesField(t, err)
			return
		}
		checkClusterBuilds(t, stored)
	})
}

func knobCluster(name, group string, replicas, hosts int32, rayVersion string, autoscale bool) *rayv1.RayCluster {
	container := func(n string) []corev1.Container {
		return []corev1.Container{{Name: n, Image: "rayproject/ray:2.60.0"}}
	}
	return &rayv1.RayCluster{
		ObjectMeta: metaOf(name),
		Spec: rayv1.RayClusterSpec{
			RayVersion:              rayVersion,
			EnableInTreeAutoscaling: &autoscale,
			HeadGroupSpec: rayv1.HeadGroupSpec{
				RayStartParams: map[string]string{},
				Template:       corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: container("ray-head")}},
			},
			WorkerGroupSpecs: []rayv1.WorkerGroupSpec{{
				GroupName: group, Replicas: &replicas, MinReplicas: new(int32(0)), MaxReplicas: &replicas, NumOfHosts: hosts,
				RayStartParams: map[string]string{},
				Template:       corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: container("ray-worker")}},
			}},
		},
	}
}
