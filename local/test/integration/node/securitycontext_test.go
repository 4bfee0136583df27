package node_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// defaultPortRange is net.ipv4.ip_local_port_range of a new network
// namespace.
const defaultPortRange = "32768 60999"

// eperm is how the C library words EPERM, what a seccomp filter's refusal
// returns.
const eperm = "Operation not permitted"

// securityScript prints, one key=value a line, what a container's
// securityContext decides.
const securityScript = `
echo "uid=$(id -u)"
echo "gid=$(id -g)"
echo "groups=$(id -G | tr ' ' '\n' | sort -n | tr '\n' ' ')"
echo "nonewprivs=$(awk '/^NoNewPrivs:/{print $2}' /proc/self/status)"
echo "seccomp=$(awk '/^Seccomp:/{print $2}' /proc/self/status)"
echo "capbnd=$(awk '/^CapBnd:/{print $2}' /proc/self/status)"
if touch /var/tmp/written 2>/dev/null; then echo "root=writable"; else echo "root=read-only"; fi
if touch /tmp/written 2>/dev/null; then echo "tmp=writable"; else echo "tmp=read-only"; fi
if touch /data/written 2>/dev/null; then echo "data=writable"; else echo "data=read-only"; fi
if out=$(unshare -U true 2>&1); then echo "userns=allowed"; else echo "userns=${out##*: }"; fi
if out=$(setarch "$(uname -m)" -R true 2>&1); then echo "personality=allowed"; else echo "personality=${out##*: }"; fi
echo "maskedkeys=$(grep -c ' /proc/keys ' /proc/self/mountinfo)"
echo "portrange=$(tr '\t' ' ' </proc/sys/net/ipv4/ip_local_port_range)"
`

// testSecurityContext runs pods whose securityContext the node honours and
// checks what their containers see, then pods it refuses: at admission
// (Failed, with reason, message and event) or at the container's start
// (Waiting, with the kubelet's reason and message).
func testSecurityContext(t *testing.T, c *cluster) {
	honoured := map[string]struct {
		pod  func(*corev1.Pod)
		want map[string]string
	}{
		"sc-defaults": {
			pod: func(*corev1.Pod) {},
			want: map[string]string{
				"uid": "0", "gid": "0", "groups": "0 ", "nonewprivs": "0", "seccomp": "0", "capbnd": "00000000a80425fb",
				"root": "writable", "tmp": "writable", "data": "writable", "userns": "allowed", "personality": "allowed", "maskedkeys": "1",
				"portrange": defaultPortRange,
			},
		},
		"sc-hardened": {
			pod: func(p *corev1.Pod) {
				p.Spec.SecurityContext = &corev1.PodSecurityContext{
					RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](1000), RunAsGroup: ptr.To[int64](100),
					FSGroup: ptr.To[int64](2000), SupplementalGroups: []int64{3000},
					SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
					Sysctls:        []corev1.Sysctl{{Name: "net.ipv4.ip_local_port_range", Value: "20000 30000"}},
				}
				p.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{
					ReadOnlyRootFilesystem:   ptr.To(true),
					AllowPrivilegeEscalation: ptr.To(false),
					Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
				}
			},
			want: map[string]string{
				"uid": "1000", "gid": "100", "groups": "100 2000 3000 ", "nonewprivs": "1", "seccomp": "2", "capbnd": "0000000000000000",
				"root": "read-only", "tmp": "writable", "data": "writable", "userns": eperm, "personality": eperm, "maskedkeys": "1",
				"portrange": "20000 30000",
			},
		},
		// RuntimeDefault is an allow list: personality(ADDR_NO_RANDOMIZE) is
		// outside it; unshare is in it only for CAP_SYS_ADMIN.
		"sc-runtimedefault": {
			pod: func(p *corev1.Pod) {
				p.Spec.SecurityContext = &corev1.PodSecurityContext{SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}}
			},
			want: map[string]string{
				"uid": "0", "gid": "0", "groups": "0 ", "nonewprivs": "0", "seccomp": "2", "capbnd": "00000000a80425fb",
				"root": "writable", "tmp": "writable", "data": "writable", "userns": eperm, "personality": eperm, "maskedkeys": "1",
				"portrange": defaultPortRange,
			},
		},
		"sc-runtimedefault-sysadmin": {
			pod: func(p *corev1.Pod) {
				p.Spec.SecurityContext = &corev1.PodSecurityContext{SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}}
				p.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"SYS_ADMIN"}}}
			},
			want: map[string]string{
				"uid": "0", "gid": "0", "groups": "0 ", "nonewprivs": "0", "seccomp": "2", "capbnd": "00000000a82425fb",
				"root": "writable", "tmp": "writable", "data": "writable", "userns": "allowed", "personality": eperm, "maskedkeys": "1",
				"portrange": defaultPortRange,
			},
		},
		"sc-localhost": {
			pod: func(p *corev1.Pod) {
				p.Spec.SecurityContext = &corev1.PodSecurityContext{
					SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeLocalhost, LocalhostProfile: ptr.To("profiles/deny-unshare.json")},
				}
			},
			want: map[string]string{
				"uid": "0", "gid": "0", "groups": "0 ", "nonewprivs": "0", "seccomp": "2", "capbnd": "00000000a80425fb",
				"root": "writable", "tmp": "writable", "data": "writable", "userns": eperm, "personality": "allowed", "maskedkeys": "1",
				"portrange": defaultPortRange,
			},
		},
		"sc-unmasked": {
			pod: func(p *corev1.Pod) {
				p.Spec.HostUsers = ptr.To(false)
				p.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{
					ProcMount:    ptr.To(corev1.UnmaskedProcMount),
					Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}, Add: []corev1.Capability{"CHOWN"}},
				}
			},
			want: map[string]string{
				"uid": "0", "gid": "0", "groups": "0 ", "nonewprivs": "0", "seccomp": "0", "capbnd": "0000000000000001",
				"root": "writable", "tmp": "writable", "data": "writable", "userns": "allowed", "personality": "allowed", "maskedkeys": "0",
				"portrange": defaultPortRange,
			},
		},
	}
	for name, tc := range honoured {
		pod := sleepPod(name, securityScript)
		pod.Spec.RestartPolicy = corev1.RestartPolicyNever
		pod.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
		pod.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}
		tc.pod(pod)
		createAndWait(t, c, pod, "Succeeded", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodSucceeded })
		if diff := cmp.Diff(tc.want, parseLines(kubeletLogs(t, c, name, "main"))); diff != "" {
			t.Errorf("pod %s: what the container sees (-want +got):\n%s", name, diff)
		}
	}
	testSecurityContextRefusals(t, c)
	names := []string{}
	for name := range honoured {
		names = append(names, name)
	}
	deleteAndWait(t, c, names...)
}

// testSecurityContextRefusals creates pods the node refuses at admission
// and pods whose container it does not start.
func testSecurityContextRefusals(t *testing.T, c *cluster) {
	admission := map[string]struct {
		pod             func(*corev1.Pod)
		reason, message string
	}{
		"sc-sysctl": {
			pod: func(p *corev1.Pod) {
				p.Spec.SecurityContext = &corev1.PodSecurityContext{Sysctls: []corev1.Sysctl{{Name: "kernel.msgmax", Value: "65536"}}}
			},
			reason: "SysctlForbidden", message: `forbidden sysctl: "kernel.msgmax" not allowlisted`,
		},
		"sc-apparmor": {
			pod: func(p *corev1.Pod) {
				p.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{AppArmorProfile: &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeRuntimeDefault}}
			},
			reason: "AppArmor", message: "Cannot enforce AppArmor: AppArmor is not enabled on the host",
		},
		"sc-selinux": {
			pod: func(p *corev1.Pod) {
				p.Spec.SecurityContext = &corev1.PodSecurityContext{SELinuxOptions: &corev1.SELinuxOptions{Level: "s0:c1,c2"}}
			},
			reason:  "SELinuxNotSupported",
			message: "pod sets securityContext.seLinuxOptions: SELinux is not enabled on the node, which cannot label the pod's processes and files",
		},
	}
	for name, tc := range admission {
		pod := sleepPod(name, "exec sleep 1000")
		tc.pod(pod)
		got := createAndWait(t, c, pod, "Failed", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodFailed })
		if got.Status.Reason != tc.reason || got.Status.Message != tc.message || len(got.Status.ContainerStatuses) != 0 {
			t.Errorf("pod %s: reason %q, message %q, container statuses %+v; want %q, %q, none",
				name, got.Status.Reason, got.Status.Message, got.Status.ContainerStatuses, tc.reason, tc.message)
		}
		waitEvent(t, c, name, tc.reason, tc.message)
	}

	start := map[string]struct {
		pod             func(*corev1.Pod)
		reason, message string
	}{
		"sc-nonroot-image": {
			pod: func(p *corev1.Pod) { p.Spec.SecurityContext = &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true)} },
			// The message's pod is filled in below: it has the pod's UID.
			reason: "CreateContainerConfigError", message: "container has runAsNonRoot and image will run as root (pod: %q, container: main)",
		},
		"sc-seccomp-missing": {
			pod: func(p *corev1.Pod) {
				p.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{
					SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeLocalhost, LocalhostProfile: ptr.To("missing.json")},
				}
			},
			reason: "CreateContainerError",
			message: `cannot load seccomp profile "` + filepath.Join(c.seccomp, "missing.json") + `": open ` +
				filepath.Join(c.seccomp, "missing.json") + ": no such file or directory",
		},
		"sc-nonroot-uid0": {
			pod: func(p *corev1.Pod) {
				p.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](0)}
			},
			reason: "CreateContainerConfigError", message: "container's runAsUser breaks non-root policy (pod: %q, container: main)",
		},
	}
	for name, tc := range start {
		pod := sleepPod(name, "exec sleep 1000")
		tc.pod(pod)
		got := createAndWait(t, c, pod, "waiting with "+tc.reason, func(p *corev1.Pod) bool {
			st := p.Status.ContainerStatuses
			return len(st) == 1 && st[0].State.Waiting != nil && st[0].State.Waiting.Reason == tc.reason
		})
		want := tc.message
		if strings.Contains(want, "%q") {
			want = fmt.Sprintf(tc.message, fmt.Sprintf("%s_%s(%s)", got.Name, got.Namespace, got.UID))
		}
		if msg := got.Status.ContainerStatuses[0].State.Waiting.Message; msg != want {
			t.Errorf("pod %s: waiting message %q, want %q", name, msg, want)
		}
		waitEvent(t, c, name, "Failed", "Error: "+want)
	}
	names := []string{}
	for name := range admission {
		names = append(names, name)
	}
	for name := range start {
		names = append(names, name)
	}
	deleteAndWait(t, c, names...)
}

// seccompDir makes the node's directory of Localhost seccomp profiles
// under dir, with profiles/deny-unshare.json, which refuses unshare(2).
func seccompDir(t *testing.T, dir string) string {
	t.Helper()
	seccomp := filepath.Join(dir, "seccomp")
	if err := os.MkdirAll(filepath.Join(seccomp, "profiles"), 0o755); err != nil {
		t.Fatal(err)
	}
	profile := `{"defaultAction":"SCMP_ACT_ALLOW","syscalls":[{"names":["unshare"],"action":"SCMP_ACT_ERRNO","errnoRet":1}]}`
	if err := os.WriteFile(filepath.Join(seccomp, "profiles", "deny-unshare.json"), []byte(profile), 0o644); err != nil {
		t.Fatal(err)
	}
	return seccomp
}

// parseLines reads key=value lines.
func parseLines(s string) map[string]string {
	m := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(s), "\n") {
		k, v, _ := strings.Cut(line, "=")
		m[k] = v
	}
	return m
}
