package podinputs

import (
	"net/netip"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
)

func testFacts() PodFacts {
	return PodFacts{
		PodIP:    netip.MustParseAddr("10.244.0.7"),
		HostIP:   netip.MustParseAddr("192.168.1.2"),
		NodeName: "ray-local",
		NodeAllocatable: corev1.ResourceList{
			corev1.ResourceCPU:              resource.MustParse("2"),
			corev1.ResourceMemory:           resource.MustParse("24Gi"),
			corev1.ResourceEphemeralStorage: resource.MustParse("100Gi"),
		},
		KubernetesService: netip.MustParseAddrPort("10.96.0.1:443"),
	}
}

// kubernetesVars are the variables of the kubernetes Service of testFacts.
var kubernetesVars = []string{
	"KUBERNETES_SERVICE_HOST=10.96.0.1",
	"KUBERNETES_SERVICE_PORT=443",
	"KUBERNETES_SERVICE_PORT_HTTPS=443",
	"KUBERNETES_PORT=tcp://10.96.0.1:443",
	"KUBERNETES_PORT_443_TCP=tcp://10.96.0.1:443",
	"KUBERNETES_PORT_443_TCP_PROTO=tcp",
	"KUBERNETES_PORT_443_TCP_PORT=443",
	"KUBERNETES_PORT_443_TCP_ADDR=10.96.0.1",
}

func testPod(c ...corev1.Container) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: "head-abc", Namespace: "ray", UID: "uid-1",
			Labels:      map[string]string{"ray.io/node-type": "head", "app": "x"},
			Annotations: map[string]string{"note": "say \"hi\"\nbye"},
		},
		Spec: corev1.PodSpec{
			NodeName: "ray-local", ServiceAccountName: "ray-sa",
			EnableServiceLinks: ptr.To(false),
			Containers:         c,
		},
	}
}

func joined(parts ...[]string) []string {
	var out []string
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func TestEnv(t *testing.T) {
	img := Image{Env: []string{"PATH=/venv/bin:/usr/bin", "HOME=/home/ray", "SHARED=image"}}
	objs := []any{
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ray", Name: "cfg"},
			Data: map[string]string{"B": "from-cm", "A": "from-cm", "naïve": "skipped", "1ST": "digit first"}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ray", Name: "creds"},
			Data: map[string][]byte{"password": []byte("s3cret"), "user": []byte("ray")}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "other", Name: "creds"},
			Data: map[string][]byte{"password": []byte("wrong namespace")}},
	}
	services := []any{
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ray", Name: "raycluster-head-svc"},
			Spec: corev1.ServiceSpec{ClusterIP: "10.96.5.5", Ports: []corev1.ServicePort{
				{Name: "gcs", Port: 6379, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(6379)},
				{Name: "dashboard", Port: 8265},
			}}},
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ray", Name: "headless"},
			Spec: corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, Ports: []corev1.ServicePort{{Port: 80}}}},
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ray", Name: "dns"},
			Spec: corev1.ServiceSpec{ClusterIP: "fd00::10", Ports: []corev1.ServicePort{{Port: 53, Protocol: corev1.ProtocolUDP}}}},
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "other", Name: "elsewhere"},
			Spec: corev1.ServiceSpec{ClusterIP: "10.96.9.9", Ports: []corev1.ServicePort{{Port: 80}}}},
	}
	cases := []struct {
		name    string
		pod     func(*corev1.Pod)
		c       corev1.Container
		want    []string
		wantErr *ConfigError
	}{{
		name: "image env and kubernetes service only, service links disabled",
		want: joined(img.Env, kubernetesVars),
	}, {
		name: "service links of the pod's namespace with a ClusterIP",
		pod:  func(p *corev1.Pod) { p.Spec.EnableServiceLinks = nil },
		want: joined(img.Env, kubernetesVars, []string{
			"DNS_SERVICE_HOST=fd00::10",
			"DNS_SERVICE_PORT=53",
			"DNS_PORT=udp://[fd00::10]:53",
			"DNS_PORT_53_UDP=udp://[fd00::10]:53",
			"DNS_PORT_53_UDP_PROTO=udp",
			"DNS_PORT_53_UDP_PORT=53",
			"DNS_PORT_53_UDP_ADDR=fd00::10",
			"RAYCLUSTER_HEAD_SVC_SERVICE_HOST=10.96.5.5",
			"RAYCLUSTER_HEAD_SVC_SERVICE_PORT=6379",
			"RAYCLUSTER_HEAD_SVC_SERVICE_PORT_GCS=6379",
			"RAYCLUSTER_HEAD_SVC_SERVICE_PORT_DASHBOARD=8265",
			"RAYCLUSTER_HEAD_SVC_PORT=tcp://10.96.5.5:6379",
			"RAYCLUSTER_HEAD_SVC_PORT_6379_TCP=tcp://10.96.5.5:6379",
			"RAYCLUSTER_HEAD_SVC_PORT_6379_TCP_PROTO=tcp",
			"RAYCLUSTER_HEAD_SVC_PORT_6379_TCP_PORT=6379",
			"RAYCLUSTER_HEAD_SVC_PORT_6379_TCP_ADDR=10.96.5.5",
			"RAYCLUSTER_HEAD_SVC_PORT_8265_TCP=tcp://10.96.5.5:8265",
			"RAYCLUSTER_HEAD_SVC_PORT_8265_TCP_PROTO=tcp",
			"RAYCLUSTER_HEAD_SVC_PORT_8265_TCP_PORT=8265",
			"RAYCLUSTER_HEAD_SVC_PORT_8265_TCP_ADDR=10.96.5.5",
		}),
	}, {
		name: "a container's variable overrides a service link, which overrides the image",
		pod:  func(p *corev1.Pod) { p.Spec.EnableServiceLinks = nil; p.Namespace = "other" },
		c: corev1.Container{Env: []corev1.EnvVar{
			{Name: "KUBERNETES_SERVICE_HOST", Value: "mine"},
			{Name: "HOME", Value: "/root"},
		}},
		want: joined([]string{"PATH=/venv/bin:/usr/bin", "HOME=/root", "SHARED=image"}, kubernetesVars[1:], []string{
			"ELSEWHERE_SERVICE_HOST=10.96.9.9",
			"ELSEWHERE_SERVICE_PORT=80",
			"ELSEWHERE_PORT=tcp://10.96.9.9:80",
			"ELSEWHERE_PORT_80_TCP=tcp://10.96.9.9:80",
			"ELSEWHERE_PORT_80_TCP_PROTO=tcp",
			"ELSEWHERE_PORT_80_TCP_PORT=80",
			"ELSEWHERE_PORT_80_TCP_ADDR=10.96.9.9",
			"KUBERNETES_SERVICE_HOST=mine",
		}),
	}, {
		name: "envFrom then env: later entries win, prefix, invalid keys skipped",
		c: corev1.Container{
			EnvFrom: []corev1.EnvFromSource{
				{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}}},
				{Prefix: "DB_", SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "creds"}}},
				{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "absent"}, Optional: ptr.To(true)}},
			},
			Env: []corev1.EnvVar{{Name: "B", Value: "from-env"}, {Name: "SHARED", Value: "container"}},
		},
		want: joined([]string{"PATH=/venv/bin:/usr/bin", "HOME=/home/ray", "SHARED=container"}, kubernetesVars,
			[]string{"1ST=digit first", "A=from-cm", "B=from-env", "DB_password=s3cret", "DB_user=ray"}),
	}, {
		name: "$(VAR) expansion against earlier entries and service links",
		c: corev1.Container{
			EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}}}},
			Env: []corev1.EnvVar{
				{Name: "X", Value: "$(A)/$$(A)/$(LATER)/$(PATH)/$(KUBERNETES_SERVICE_HOST):$(KUBERNETES_SERVICE_PORT)"},
				{Name: "LATER", Value: "later"},
				{Name: "Y", Value: "$(X)+$(LATER)"},
				{Name: "POD", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
				{Name: "Z", Value: "$(POD)"},
				{Name: "NOT_EXPANDED", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
					LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}, Key: "A"}}},
			},
		},
		want: joined(img.Env, kubernetesVars, []string{
			"1ST=digit first", "A=from-cm", "B=from-cm",
			"X=from-cm/$(A)/$(LATER)/$(PATH)/10.96.0.1:443",
			"LATER=later",
			"Y=from-cm/$(A)/$(LATER)/$(PATH)/10.96.0.1:443+later",
			"POD=head-abc",
			"Z=head-abc",
			"NOT_EXPANDED=from-cm",
		}),
	}, {
		name: "fieldRef paths",
		c: corev1.Container{Env: fieldEnv(map[string]string{
			"NAME": "metadata.name", "NS": "metadata.namespace", "UID": "metadata.uid",
			"LABEL": "metadata.labels['ray.io/node-type']", "NO_LABEL": "metadata.labels['none']",
			"ANN":  "metadata.annotations['note']",
			"NODE": "spec.nodeName", "SA": "spec.serviceAccountName",
			"HOST_IP": "status.hostIP", "HOST_IPS": "status.hostIPs",
			"POD_IP": "status.podIP", "POD_IPS": "status.podIPs",
		})},
		want: joined(img.Env, kubernetesVars, []string{
			"ANN=say \"hi\"\nbye", "HOST_IP=192.168.1.2", "HOST_IPS=192.168.1.2", "LABEL=head", "NAME=head-abc",
			"NODE=ray-local", "NO_LABEL=", "NS=ray", "POD_IP=10.244.0.7", "POD_IPS=10.244.0.7", "SA=ray-sa", "UID=uid-1",
		}),
	}, {
		name: "resourceFieldRef: divisor, rounding up, node allocatable for a missing limit",
		c: corev1.Container{
			Name: "ray-head",
			Resources: corev1.ResourceRequirements{
				Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")},
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse("1Gi")},
			},
			Env: []corev1.EnvVar{
				resourceEnv("CPU_LIMIT", "", "limits.cpu", ""),
				resourceEnv("CPU_LIMIT_M", "", "limits.cpu", "1m"),
				resourceEnv("CPU_REQUEST_M", "", "requests.cpu", "1m"),
				resourceEnv("MEM_LIMIT", "", "limits.memory", ""),
				resourceEnv("MEM_LIMIT_MI", "", "limits.memory", "1Mi"),
				resourceEnv("MEM_REQUEST_G", "", "requests.memory", "1G"),
				resourceEnv("EPHEMERAL_LIMIT_GI", "", "limits.ephemeral-storage", "1Gi"),
				resourceEnv("EPHEMERAL_REQUEST", "", "requests.ephemeral-storage", ""),
				resourceEnv("SIDECAR_MEM", "sidecar", "limits.memory", "1Ki"),
			},
		},
		pod: func(p *corev1.Pod) {
			p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "sidecar", Resources: corev1.ResourceRequirements{
				Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1025")}}})
		},
		want: joined(img.Env, kubernetesVars, []string{
			"CPU_LIMIT=1", "CPU_LIMIT_M=500", "CPU_REQUEST_M=250",
			"MEM_LIMIT=25769803776", "MEM_LIMIT_MI=24576", "MEM_REQUEST_G=2",
			"EPHEMERAL_LIMIT_GI=100", "EPHEMERAL_REQUEST=0", "SIDECAR_MEM=2",
		}),
	}, {
		name: "secretKeyRef and configMapKeyRef, optional ones missing are left out",
		c: corev1.Container{Env: []corev1.EnvVar{
			secretEnv("PASSWORD", "creds", "password", nil),
			cmEnv("CFG_A", "cfg", "A", nil),
			secretEnv("NO_SECRET", "absent", "k", ptr.To(true)),
			secretEnv("NO_SECRET_KEY", "creds", "absent", ptr.To(true)),
			cmEnv("NO_CM", "absent", "k", ptr.To(true)),
			cmEnv("NO_CM_KEY", "cfg", "absent", ptr.To(true)),
		}},
		want: joined(img.Env, kubernetesVars, []string{"PASSWORD=s3cret", "CFG_A=from-cm"}),
	}, {
		name:    "missing Secret",
		c:       corev1.Container{Env: []corev1.EnvVar{secretEnv("P", "absent", "password", nil)}},
		wantErr: &ConfigError{Reason: ReasonCreateContainerConfigError, Message: `secret "absent" not found`},
	}, {
		name:    "missing Secret key",
		c:       corev1.Container{Env: []corev1.EnvVar{secretEnv("P", "creds", "token", ptr.To(false))}},
		wantErr: &ConfigError{Reason: ReasonCreateContainerConfigError, Message: `couldn't find key token in Secret ray/creds`},
	}, {
		name:    "missing ConfigMap",
		c:       corev1.Container{Env: []corev1.EnvVar{cmEnv("P", "absent", "A", nil)}},
		wantErr: &ConfigError{Reason: ReasonCreateContainerConfigError, Message: `configmap "absent" not found`},
	}, {
		name:    "missing ConfigMap key",
		c:       corev1.Container{Env: []corev1.EnvVar{cmEnv("P", "cfg", "nokey", nil)}},
		wantErr: &ConfigError{Reason: ReasonCreateContainerConfigError, Message: `couldn't find key nokey in ConfigMap ray/cfg`},
	}, {
		name: "missing envFrom Secret",
		c: corev1.Container{EnvFrom: []corev1.EnvFromSource{
			{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "absent"}}}}},
		wantErr: &ConfigError{Reason: ReasonCreateContainerConfigError, Message: `secret "absent" not found`},
	}, {
		name:    "unknown fieldPath",
		c:       corev1.Container{Env: fieldEnv(map[string]string{"X": "spec.hostname"})},
		wantErr: &ConfigError{Reason: ReasonCreateContainerConfigError, Message: `unsupported fieldPath: spec.hostname`},
	}, {
		name:    "unknown resource",
		c:       corev1.Container{Env: []corev1.EnvVar{resourceEnv("X", "", "limits.nvidia.com/gpu", "")}},
		wantErr: &ConfigError{Reason: ReasonCreateContainerConfigError, Message: `unsupported container resource : limits.nvidia.com/gpu`},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pod := testPod(tc.c)
			if tc.pod != nil {
				tc.pod(pod)
			}
			objs := newFakeObjects(clocktesting.NewFakeClock(testTime), append(objs, services...)...)
			got, err := Env(t.Context(), objs, pod, &pod.Spec.Containers[0], img, testFacts())
			if diff := cmp.Diff(tc.wantErr, configError(err), cmpConfigError); diff != "" {
				t.Fatalf("Env error (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Env (-want +got):\n%s", diff)
			}
		})
	}
}

func TestEnvPodIPFromStatusWithoutFacts(t *testing.T) {
	pod := testPod(corev1.Container{Env: fieldEnv(map[string]string{"IPS": "status.podIPs", "HOST": "status.hostIP"})})
	pod.Status.PodIPs = []corev1.PodIP{{IP: "10.0.0.1"}, {IP: "fd00::1"}}
	pod.Status.HostIP = "192.168.9.9"
	got, err := Env(t.Context(), newFakeObjects(nil), pod, &pod.Spec.Containers[0], Image{}, PodFacts{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"HOST=192.168.9.9", "IPS=10.0.0.1,fd00::1"}, got); diff != "" {
		t.Errorf("Env (-want +got):\n%s", diff)
	}
}

// fieldEnv makes one fieldRef variable per name, in name order.
func fieldEnv(paths map[string]string) []corev1.EnvVar {
	var out []corev1.EnvVar
	for _, name := range sortedKeys(paths) {
		out = append(out, corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{
			FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: paths[name]}}})
	}
	return out
}

func resourceEnv(name, container, res, divisor string) corev1.EnvVar {
	sel := &corev1.ResourceFieldSelector{ContainerName: container, Resource: res}
	if divisor != "" {
		sel.Divisor = resource.MustParse(divisor)
	}
	return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{ResourceFieldRef: sel}}
}

func secretEnv(name, secret, key string, optional *bool) corev1.EnvVar {
	return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: secret}, Key: key, Optional: optional}}}
}

func cmEnv(name, cm, key string, optional *bool) corev1.EnvVar {
	return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: cm}, Key: key, Optional: optional}}}
}
