package podworker

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/ray-operator/ray-operator/local/internal/podinputs"
	"github.com/ray-operator/ray-operator/local/internal/sandbox"
)

func TestCrashBackoffSequence(t *testing.T) {
	clk := clocktesting.NewFakeClock(t0)
	b := newCrashLoop(clk)
	now := t0
	var waits []time.Duration
	for range 9 {
		// The container exits one second after each restart.
		finished := now.Add(time.Second)
		clk.SetTime(finished)
		at := b.readyAt("c", finished)
		waits = append(waits, at.Sub(finished))
		now = at
		clk.SetTime(now)
		b.restarted("c", finished)
	}
	want := []time.Duration{0, 10 * time.Second, 20 * time.Second, 40 * time.Second, 80 * time.Second, 160 * time.Second, 300 * time.Second, 300 * time.Second, 300 * time.Second}
	if diff := cmp.Diff(want, waits); diff != "" {
		t.Errorf("waits (-want +got):\n%s", diff)
	}
	// Running more than 10 minutes since the last restart starts over.
	finished := now.Add(11 * time.Minute)
	clk.SetTime(finished)
	if at := b.readyAt("c", finished); !at.Equal(finished) {
		t.Errorf("after 11 min of running: restart at +%v, want at once", at.Sub(finished))
	}
	b.restarted("c", finished)
	if d := b.delay("c"); d != initialBackoff {
		t.Errorf("delay after reset = %v, want %v", d, initialBackoff)
	}
}

func TestRetryBackoffSequence(t *testing.T) {
	clk := clocktesting.NewFakeClock(t0)
	r := newRetries(clk)
	var delays []time.Duration
	for range 9 {
		d := r.next("c", clk.Now())
		delays = append(delays, d)
		clk.Step(d) // retried on time, and failed again
	}
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 32 * time.Second, time.Minute, time.Minute, time.Minute}
	if diff := cmp.Diff(want, delays); diff != "" {
		t.Errorf("delays (-want +got):\n%s", diff)
	}
	r.reset("c")
	if d := r.next("c", clk.Now()); d != time.Second {
		t.Errorf("delay after a success = %v, want 1s", d)
	}
}

func TestSandboxSpecFor(t *testing.T) {
	node := NodeInfo{ClusterDNS: []string{"10.96.0.10"}, ClusterDomain: "cluster.local"}
	base := func() *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "head", Namespace: "ray", UID: "u"}}
	}
	cases := map[string]struct {
		pod       func(*corev1.Pod)
		hostUsers bool
		want      sandbox.SandboxSpec
	}{
		"ClusterFirst by default": {
			pod: func(*corev1.Pod) {},
			want: sandbox.SandboxSpec{UID: "u", Namespace: "ray", Name: "head", Hostname: "head", ClusterDomain: "cluster.local", CPUShares: 2,
				DNS: sandbox.DNSConfig{Nameservers: []string{"10.96.0.10"}, Searches: []string{"ray.svc.cluster.local", "svc.cluster.local", "cluster.local"}, Options: []string{"ndots:5"}}},
		},
		"hostname, subdomain, dnsConfig, /dev/shm from a Memory emptyDir": {
			pod: func(p *corev1.Pod) {
				p.Spec.Hostname, p.Spec.Subdomain = "h", "sub"
				p.Spec.DNSConfig = &corev1.PodDNSConfig{Nameservers: []string{"1.1.1.1"}, Searches: []string{"x"}, Options: []corev1.PodDNSConfigOption{{Name: "ndots", Value: ptr.To("2")}, {Name: "edns0"}}}
				p.Spec.Volumes = []corev1.Volume{{Name: "shm", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory, SizeLimit: ptr.To(resource.MustParse("1Gi"))}}}}
				p.Spec.Containers = []corev1.Container{{Name: "c", VolumeMounts: []corev1.VolumeMount{{Name: "shm", MountPath: "/dev/shm"}}}}
			},
			want: sandbox.SandboxSpec{UID: "u", Namespace: "ray", Name: "head", Hostname: "h", Subdomain: "sub", ClusterDomain: "cluster.local", CPUShares: 2, ShmSizeBytes: 1 << 30,
				DNS: sandbox.DNSConfig{Nameservers: []string{"10.96.0.10", "1.1.1.1"}, Searches: []string{"ray.svc.cluster.local", "svc.cluster.local", "cluster.local", "x"}, Options: []string{"ndots:2", "edns0"}}},
		},
		"None uses only dnsConfig": {
			pod: func(p *corev1.Pod) {
				p.Spec.DNSPolicy = corev1.DNSNone
				p.Spec.DNSConfig = &corev1.PodDNSConfig{Nameservers: []string{"8.8.8.8"}}
			},
			want: sandbox.SandboxSpec{UID: "u", Namespace: "ray", Name: "head", Hostname: "head", ClusterDomain: "cluster.local", CPUShares: 2, DNS: sandbox.DNSConfig{Nameservers: []string{"8.8.8.8"}}},
		},
		"hostNetwork admitted with host privileges: the host's users": {
			pod:       func(p *corev1.Pod) { p.Spec.HostNetwork, p.Spec.DNSPolicy = true, corev1.DNSNone },
			hostUsers: true,
			want:      sandbox.SandboxSpec{UID: "u", Namespace: "ray", Name: "head", Hostname: "head", ClusterDomain: "cluster.local", CPUShares: 2, HostNetwork: true, HostUsers: true},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			pod := base()
			tc.pod(pod)
			if diff := cmp.Diff(tc.want, sandboxSpecFor(pod, node, Limits{}, tc.hostUsers)); diff != "" {
				t.Errorf("spec (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseResolvConf(t *testing.T) {
	got := parseResolvConf([]byte("# c\nnameserver 10.0.0.2\nnameserver 10.0.0.3\nsearch a b\noptions ndots:1 rotate\n"))
	want := sandbox.DNSConfig{Nameservers: []string{"10.0.0.2", "10.0.0.3"}, Searches: []string{"a", "b"}, Options: []string{"ndots:1", "rotate"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("resolv.conf (-want +got):\n%s", diff)
	}
}

func TestContainerSpecFor(t *testing.T) {
	c := &corev1.Container{
		Name:            "ray-head",
		Stdin:           true,
		StdinOnce:       true,
		TTY:             true,
		SecurityContext: &corev1.SecurityContext{RunAsUser: ptr.To[int64](1000)},
		Resources:       corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("2Gi"), corev1.ResourceCPU: resource.MustParse("1500m")}},
	}
	got := containerSpecFor(c, Image{Image: podinputs.Image{WorkingDir: "/home/ray"}}, ContainerInputs{Args: []string{"ray", "start"}, Env: []string{"A=1"}}, 2)
	want := sandbox.ContainerSpec{Name: "ray-head", Attempt: 2, Args: []string{"ray", "start"}, Env: []string{"A=1"}, WorkingDir: "/home/ray",
		MemoryLimitBytes: 2 << 30, CPUMillis: 1500, CPUShares: 1536, TTY: true, OpenStdin: true, StdinOnce: true}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("spec (-want +got):\n%s", diff)
	}
}
