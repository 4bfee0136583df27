package podworker

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	specs "github.com/opencontainers/runtime-spec/specs-go"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/ray-operator/ray-operator/local/internal/sandbox"
)

// securityPod is a pod with one container "main" and the UID u.
func securityPod(podSC *corev1.PodSecurityContext, sc *corev1.SecurityContext) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "head", Namespace: "ray", UID: "u"},
		Spec: corev1.PodSpec{
			SecurityContext: podSC,
			Containers:      []corev1.Container{{Name: "main", SecurityContext: sc}},
		},
	}
}

func TestApplySecurityContext(t *testing.T) {
	seccompDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(seccompDir, "deny-mkdir.json"), []byte(`{"defaultAction":"SCMP_ACT_ALLOW","syscalls":[{"names":["mkdir"],"action":"SCMP_ACT_ERRNO"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(seccompDir, "broken.json"), []byte(`{"syscalls":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		podSC   *corev1.PodSecurityContext
		sc      *corev1.SecurityContext
		want    sandbox.ContainerSpec
		refusal *waitingError
	}{
		"none: root, the image's groups, no hardening": {},
		"runAsUser from the pod takes the image's group and groups; the container's wins": {
			podSC: &corev1.PodSecurityContext{RunAsUser: ptr.To[int64](5), SupplementalGroups: []int64{3000, 100}, FSGroup: ptr.To[int64](2000)},
			sc:    &corev1.SecurityContext{RunAsUser: ptr.To[int64](1000)},
			want:  sandbox.ContainerSpec{UID: 1000, GID: 100, AdditionalGIDs: []uint32{3000, 2000}},
		},
		"runAsGroup; Strict leaves the image's groups out": {
			podSC: &corev1.PodSecurityContext{RunAsUser: ptr.To[int64](1000), RunAsGroup: ptr.To[int64](7), SupplementalGroupsPolicy: ptr.To(corev1.SupplementalGroupsPolicyStrict)},
			want:  sandbox.ContainerSpec{UID: 1000, GID: 7},
		},
		"Merge adds the image's groups": {
			podSC: &corev1.PodSecurityContext{RunAsUser: ptr.To[int64](1000), RunAsGroup: ptr.To[int64](7)},
			want:  sandbox.ContainerSpec{UID: 1000, GID: 7, AdditionalGIDs: []uint32{100}},
		},
		"runAsNonRoot with a non-root user": {
			podSC: &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](1000)},
			want:  sandbox.ContainerSpec{UID: 1000, GID: 100},
		},
		"runAsNonRoot and the image's root": {
			podSC: &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true)},
			refusal: &waitingError{Reason: "CreateContainerConfigError",
				Message: `container has runAsNonRoot and image will run as root (pod: "head_ray(u)", container: main)`},
		},
		"runAsNonRoot and runAsUser 0": {
			podSC: &corev1.PodSecurityContext{RunAsUser: ptr.To[int64](1000)},
			sc:    &corev1.SecurityContext{RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](0)},
			refusal: &waitingError{Reason: "CreateContainerConfigError",
				Message: `container's runAsUser breaks non-root policy (pod: "head_ray(u)", container: main)`},
		},
		"the container's runAsNonRoot: false lifts the pod's": {
			podSC: &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true)},
			sc:    &corev1.SecurityContext{RunAsNonRoot: ptr.To(false)},
		},
		"hardening": {
			podSC: &corev1.PodSecurityContext{
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
				Sysctls:        []corev1.Sysctl{{Name: "net/ipv4/ip_local_port_range", Value: "20000 30000"}},
			},
			sc: &corev1.SecurityContext{
				ReadOnlyRootFilesystem: ptr.To(true), AllowPrivilegeEscalation: ptr.To(false), ProcMount: ptr.To(corev1.UnmaskedProcMount),
				Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}, Add: []corev1.Capability{"NET_BIND_SERVICE"}},
			},
			want: sandbox.ContainerSpec{
				ReadOnlyRoot: true, NoNewPrivileges: true, UnmaskedProc: true,
				CapAdd: []string{"NET_BIND_SERVICE"}, CapDrop: []string{"ALL"},
				Seccomp: sandbox.Seccomp{Type: sandbox.SeccompRuntimeDefault},
				Sysctls: map[string]string{"net.ipv4.ip_local_port_range": "20000 30000"},
			},
		},
		"allowPrivilegeEscalation: true, Default procMount": {
			sc: &corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(true), ProcMount: ptr.To(corev1.DefaultProcMount)},
		},
		"the container's Unconfined over the pod's RuntimeDefault": {
			podSC: &corev1.PodSecurityContext{SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
			sc:    &corev1.SecurityContext{SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeUnconfined}},
		},
		"privileged: unconfined": {
			podSC: &corev1.PodSecurityContext{SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
			sc:    &corev1.SecurityContext{Privileged: ptr.To(true)},
			want:  sandbox.ContainerSpec{Privileged: true},
		},
		"a Localhost profile": {
			sc: &corev1.SecurityContext{SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeLocalhost, LocalhostProfile: ptr.To("deny-mkdir.json")}},
			want: sandbox.ContainerSpec{Seccomp: sandbox.Seccomp{Type: sandbox.SeccompLocalhost, Profile: &specs.LinuxSeccomp{
				DefaultAction: specs.ActAllow, Syscalls: []specs.LinuxSyscall{{Names: []string{"mkdir"}, Action: specs.ActErrno}},
			}}},
		},
		"a missing Localhost profile": {
			sc: &corev1.SecurityContext{SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeLocalhost, LocalhostProfile: ptr.To("missing.json")}},
			refusal: &waitingError{Reason: "CreateContainerError", Message: `cannot load seccomp profile "` + filepath.Join(seccompDir, "missing.json") +
				`": open ` + filepath.Join(seccompDir, "missing.json") + `: no such file or directory`},
		},
		"a Localhost profile that is not one": {
			sc: &corev1.SecurityContext{SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeLocalhost, LocalhostProfile: ptr.To("broken.json")}},
			refusal: &waitingError{Reason: "CreateContainerError", Message: `cannot load seccomp profile "` + filepath.Join(seccompDir, "broken.json") +
				`": not a seccomp profile: no defaultAction`},
		},
		"a Localhost profile outside the directory": {
			sc: &corev1.SecurityContext{SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeLocalhost, LocalhostProfile: ptr.To("../x.json")}},
			refusal: &waitingError{Reason: "CreateContainerError",
				Message: `cannot load seccomp profile "../x.json": not a path inside the node's seccomp profile directory ` + seccompDir},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			pod := securityPod(tc.podSC, tc.sc)
			var got sandbox.ContainerSpec
			refusal := applySecurityContext(&got, pod, &pod.Spec.Containers[0], Image{}, seccompDir)
			if diff := cmp.Diff(tc.refusal, refusal); diff != "" {
				t.Errorf("refusal (-want +got):\n%s", diff)
			}
			if refusal != nil {
				return
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("spec (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSecurityRefusal(t *testing.T) {
	tests := map[string]struct {
		pod             func(*corev1.Pod)
		reason, message string
	}{
		"nothing to refuse": {pod: func(*corev1.Pod) {}},
		"safe sysctls": {
			pod: func(p *corev1.Pod) {
				p.Spec.SecurityContext = &corev1.PodSecurityContext{Sysctls: []corev1.Sysctl{{Name: "kernel.shm_rmid_forced", Value: "1"}, {Name: "net/ipv4/tcp_syncookies", Value: "1"}}}
			},
		},
		"an unsafe sysctl": {
			pod: func(p *corev1.Pod) {
				p.Spec.SecurityContext = &corev1.PodSecurityContext{Sysctls: []corev1.Sysctl{{Name: "net.core.somaxconn", Value: "1024"}}}
			},
			reason: "SysctlForbidden", message: `forbidden sysctl: "net.core.somaxconn" not allowlisted`,
		},
		"a network sysctl with the host's network": {
			pod: func(p *corev1.Pod) {
				p.Spec.HostNetwork = true
				p.Spec.SecurityContext = &corev1.PodSecurityContext{Sysctls: []corev1.Sysctl{{Name: "net.ipv4.tcp_syncookies", Value: "1"}}}
			},
			reason: "SysctlForbidden", message: `forbidden sysctl: "net.ipv4.tcp_syncookies" not allowed with host net enabled`,
		},
		"an IPC sysctl with the host's IPC": {
			pod: func(p *corev1.Pod) {
				p.Spec.HostIPC = true
				p.Spec.SecurityContext = &corev1.PodSecurityContext{Sysctls: []corev1.Sysctl{{Name: "kernel.shm_rmid_forced", Value: "1"}}}
			},
			reason: "SysctlForbidden", message: `forbidden sysctl: "kernel.shm_rmid_forced" not allowed with host ipc enabled`,
		},
		"an Unconfined AppArmor profile": {
			pod: func(p *corev1.Pod) {
				p.Spec.SecurityContext = &corev1.PodSecurityContext{AppArmorProfile: &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeUnconfined}}
				p.Annotations = map[string]string{appArmorAnnotationPrefix + "main": "unconfined"}
			},
		},
		"a container's AppArmor profile": {
			pod: func(p *corev1.Pod) {
				p.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{AppArmorProfile: &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeRuntimeDefault}}
			},
			reason: "AppArmor", message: "Cannot enforce AppArmor: " + appArmorAbsence(),
		},
		"an AppArmor annotation": {
			pod: func(p *corev1.Pod) {
				p.Annotations = map[string]string{appArmorAnnotationPrefix + "main": "runtime/default"}
			},
			reason: "AppArmor", message: "Cannot enforce AppArmor: " + appArmorAbsence(),
		},
		"SELinux options of the pod and a container": {
			pod: func(p *corev1.Pod) {
				p.Spec.SecurityContext = &corev1.PodSecurityContext{SELinuxOptions: &corev1.SELinuxOptions{Level: "s0:c1"}}
				p.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{SELinuxOptions: &corev1.SELinuxOptions{Type: "spc_t"}}
			},
			reason:  "SELinuxNotSupported",
			message: `pod, container "main" sets securityContext.seLinuxOptions: SELinux is not enabled on the node, which cannot label the pod's processes and files`,
		},
		"Windows options": {
			pod: func(p *corev1.Pod) {
				p.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{WindowsOptions: &corev1.WindowsSecurityContextOptions{HostProcess: ptr.To(true)}}
			},
			reason: "WindowsOptionsNotSupported", message: `container "main" sets securityContext.windowsOptions: the node runs Linux containers`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			pod := securityPod(nil, nil)
			tc.pod(pod)
			reason, message := securityRefusal(pod)
			if reason != tc.reason || message != tc.message {
				t.Errorf("refusal %q, %q; want %q, %q", reason, message, tc.reason, tc.message)
			}
		})
	}
}

// appArmorAbsence says why this machine does not enforce AppArmor.
func appArmorAbsence() string {
	if b, err := os.ReadFile("/sys/module/apparmor/parameters/enabled"); err == nil && string(b) == "Y\n" {
		return "the local node does not apply AppArmor profiles"
	}
	return "AppArmor is not enabled on the host"
}
