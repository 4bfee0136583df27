package raypod

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

func TestHeadRayStartCommand(t *testing.T) {
	const base = " --block  --dashboard-agent-listen-port=52365  --dashboard-host=0.0.0.0 "
	tests := map[string]struct {
		mutate func(*rayv1.RayCluster)
		want   string
	}{
		"cpu and memory from limits": {
			mutate: func(*rayv1.RayCluster) {},
			want:   "ray start --head " + base + " --memory=2000000000  --metrics-export-port=8080  --num-cpus=1 ",
		},
		"cpu from requests when no limit, memory only from limits": {
			mutate: func(c *rayv1.RayCluster) {
				headContainer(c).Resources = corev1.ResourceRequirements{Requests: corev1.ResourceList{
					corev1.ResourceCPU: resource.MustParse("1500m"), corev1.ResourceMemory: resource.MustParse("1G"),
				}}
			},
			want: "ray start --head " + base + " --metrics-export-port=8080  --num-cpus=2 ",
		},
		"rayStartParams win over container resources": {
			mutate: func(c *rayv1.RayCluster) {
				c.Spec.HeadGroupSpec.RayStartParams = map[string]string{"num-cpus": "0", "memory": "5"}
			},
			want: "ray start --head " + base + " --memory=5  --metrics-export-port=8080  --num-cpus=0 ",
		},
		"gpu and tpu limits": {
			mutate: func(c *rayv1.RayCluster) {
				headContainer(c).Resources.Limits["nvidia.com/gpu"] = resource.MustParse("2")
				headContainer(c).Resources.Limits["google.com/tpu"] = resource.MustParse("4")
			},
			want: "ray start --head " + base + " --memory=2000000000  --metrics-export-port=8080  --num-cpus=1  --num-gpus=2  --resources='{\"TPU\":4}' ",
		},
		"existing custom accelerator in resources is kept": {
			mutate: func(c *rayv1.RayCluster) {
				headContainer(c).Resources.Limits["google.com/tpu"] = resource.MustParse("4")
				c.Spec.HeadGroupSpec.RayStartParams = map[string]string{"resources": `'{"TPU":1,"x":2}'`}
			},
			want: "ray start --head " + base + " --memory=2000000000  --metrics-export-port=8080  --num-cpus=1  --resources='{\"TPU\":1,\"x\":2}' ",
		},
		"group resources and labels override rayStartParams": {
			mutate: func(c *rayv1.RayCluster) {
				c.Spec.HeadGroupSpec.RayStartParams = map[string]string{"num-cpus": "8", "labels": "a=b"}
				c.Spec.HeadGroupSpec.Resources = map[string]string{"CPU": "3", "memory": "1Gi", "nvidia.com/gpu": "1", "custom": "500m"}
				c.Spec.HeadGroupSpec.Labels = map[string]string{"zone": "a", "accel": "h100"}
			},
			want: "ray start --head " + base + " --labels=accel=h100,zone=a  --memory=1073741824  --metrics-export-port=8080  --num-cpus=3  --num-gpus=1  --resources='{\"custom\":0.5}' ",
		},
		"switches and explicit booleans": {
			mutate: func(c *rayv1.RayCluster) {
				c.Spec.HeadGroupSpec.RayStartParams = map[string]string{
					"include-dashboard": "false", "log-color": "true", "disable-usage-stats": "True", "some-switch": "false",
				}
			},
			want: "ray start --head " + base + " --disable-usage-stats  --include-dashboard=false  --log-color=true  --memory=2000000000  --metrics-export-port=8080  --num-cpus=1 ",
		},
		"user ports and dashboard host are kept": {
			mutate: func(c *rayv1.RayCluster) {
				c.Spec.HeadGroupSpec.RayStartParams = map[string]string{"dashboard-host": "127.0.0.1", "metrics-export-port": "9000", "dashboard-agent-listen-port": "1234", "block": "false"}
			},
			want: "ray start --head  --block  --dashboard-agent-listen-port=1234  --dashboard-host=127.0.0.1  --memory=2000000000  --metrics-export-port=9000  --num-cpus=1 ",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c := newCluster(tc.mutate)
			got := startCmd(buildHead(t, c, Options{}))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ray start (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWorkerRayStartCommand(t *testing.T) {
	tests := map[string]struct {
		mutate func(*rayv1.RayCluster)
		opts   Options
		want   string
	}{
		"address from head service and port": {
			mutate: func(c *rayv1.RayCluster) { c.Spec.HeadGroupSpec.RayStartParams = map[string]string{"port": "6380"} },
			want:   "ray start  --address=raycluster-head-svc.default.svc.cluster.local:6380  --block  --dashboard-agent-listen-port=52365  --metrics-export-port=8080 ",
		},
		"custom cluster domain": {
			mutate: func(*rayv1.RayCluster) {},
			opts:   Options{ClusterDomain: "corp.local"},
			want:   "ray start  --address=raycluster-head-svc.default.svc.corp.local:6379  --block  --dashboard-agent-listen-port=52365  --metrics-export-port=8080 ",
		},
		"user address kept": {
			mutate: func(c *rayv1.RayCluster) {
				c.Spec.WorkerGroupSpecs[0].RayStartParams = map[string]string{"address": "elsewhere:1"}
			},
			want: "ray start  --address=elsewhere:1  --block  --dashboard-agent-listen-port=52365  --metrics-export-port=8080 ",
		},
		"mig slice counts as gpu": {
			mutate: func(c *rayv1.RayCluster) {
				workerContainer(c).Resources.Limits = corev1.ResourceList{"nvidia.com/mig-1g.5gb": resource.MustParse("1")}
			},
			want: "ray start  --address=raycluster-head-svc.default.svc.cluster.local:6379  --block  --dashboard-agent-listen-port=52365  --metrics-export-port=8080  --num-gpus=1 ",
		},
		"neuron cores": {
			mutate: func(c *rayv1.RayCluster) {
				workerContainer(c).Resources.Limits = corev1.ResourceList{"aws.amazon.com/neuroncore": resource.MustParse("2")}
			},
			want: "ray start  --address=raycluster-head-svc.default.svc.cluster.local:6379  --block  --dashboard-agent-listen-port=52365  --metrics-export-port=8080  --resources='{\"neuron_cores\":2}' ",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := startCmd(buildWorker(t, newCluster(tc.mutate), WorkerIndex{}, tc.opts))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ray start (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBuildersDoNotMutateCluster(t *testing.T) {
	c := newCluster(func(c *rayv1.RayCluster) {
		c.Spec.EnableInTreeAutoscaling = new(true)
		c.Spec.GcsFaultToleranceOptions = &rayv1.GcsFaultToleranceOptions{RedisAddress: "redis:6379", RedisPassword: &rayv1.RedisCredential{Value: "pw"}}
	})
	before := c.DeepCopy()
	buildHead(t, c, Options{})
	buildWorker(t, c, WorkerIndex{}, Options{})
	if diff := cmp.Diff(before, c); diff != "" {
		t.Errorf("cluster changed (-before +after):\n%s", diff)
	}
}

func TestRayContainerCommand(t *testing.T) {
	generatedFor := func(pod *corev1.Pod) string {
		return "ulimit -n ${RAY_START_ULIMIT_OPEN_FILES:-65536}; " + startCmd(pod)
	}
	tests := map[string]struct {
		mutate      func(*rayv1.RayCluster)
		opts        Options
		wantCommand []string
		wantArgs    func(*corev1.Pod) []string
	}{
		"generated": {
			mutate:      func(*rayv1.RayCluster) {},
			wantCommand: []string{"/bin/bash", "-c", "--"},
			wantArgs:    func(p *corev1.Pod) []string { return []string{generatedFor(p)} },
		},
		"login shell": {
			mutate:      func(*rayv1.RayCluster) {},
			opts:        Options{LoginShell: true},
			wantCommand: []string{"/bin/bash", "-cl", "--"},
			wantArgs:    func(p *corev1.Pod) []string { return []string{generatedFor(p)} },
		},
		"user command runs first": {
			mutate: func(c *rayv1.RayCluster) {
				headContainer(c).Command = []string{"/bin/bash", "-c"}
				headContainer(c).Args = []string{"echo hi"}
			},
			wantCommand: []string{"/bin/bash", "-c", "--"},
			wantArgs: func(p *corev1.Pod) []string {
				return []string{" /bin/bash  -c  echo hi  && " + generatedFor(p)}
			},
		},
		"user command that runs ray start is kept": {
			mutate: func(c *rayv1.RayCluster) {
				headContainer(c).Command = []string{"sh", "-c", "ray start --head --block"}
			},
			wantCommand: []string{"sh", "-c", "ray start --head --block"},
			wantArgs:    func(*corev1.Pod) []string { return nil },
		},
		"overwrite-container-cmd keeps the user command": {
			mutate: func(c *rayv1.RayCluster) {
				c.Annotations = map[string]string{rayv1.AnnotationOverwriteContainerCmd: "TRUE"}
				headContainer(c).Command = []string{"my-entrypoint"}
			},
			wantCommand: []string{"my-entrypoint"},
			wantArgs:    func(*corev1.Pod) []string { return nil },
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			pod := buildHead(t, newCluster(tc.mutate), tc.opts)
			ray := pod.Spec.Containers[0]
			if diff := cmp.Diff(tc.wantCommand, ray.Command); diff != "" {
				t.Errorf("command (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantArgs(pod), ray.Args); diff != "" {
				t.Errorf("args (-want +got):\n%s", diff)
			}
			if startCmd(pod) == "" {
				t.Errorf("KUBERAY_GEN_RAY_START_CMD is empty")
			}
		})
	}
}
