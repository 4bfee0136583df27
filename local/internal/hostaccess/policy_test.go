package hostaccess

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// basePod is a pod of one plain container.
func basePod() *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "busybox"}}},
	}
}

func privileged() *corev1.SecurityContext {
	return &corev1.SecurityContext{Privileged: ptr.To(true)}
}

func hostPathVolume(name, path string) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: path}}}
}

const hostRootAdvice = "; the node runs such pods only when started with --allow-host-privileges"

func TestHostPrivileges(t *testing.T) {
	cases := map[string]struct {
		pod     func(*corev1.Pod)
		message string // "" when the pod needs nothing of the host
	}{
		"plain pod": {pod: func(*corev1.Pod) {}},
		"explicit hostUsers false, privilege escalation and capabilities": {pod: func(p *corev1.Pod) {
			p.Spec.HostUsers = ptr.To(false)
			p.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{
				Privileged: ptr.To(false), AllowPrivilegeEscalation: ptr.To(true),
				Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"SYS_ADMIN", "NET_ADMIN"}},
			}
		}},
		"privileged container": {
			pod:     func(p *corev1.Pod) { p.Spec.Containers[0].SecurityContext = privileged() },
			message: `the pod needs root on the host: container "main" sets securityContext.privileged: true` + hostRootAdvice,
		},
		"privileged init container": {
			pod: func(p *corev1.Pod) {
				p.Spec.InitContainers = []corev1.Container{{Name: "setup", SecurityContext: privileged()}}
			},
			message: `the pod needs root on the host: init container "setup" sets securityContext.privileged: true` + hostRootAdvice,
		},
		"privileged ephemeral container": {
			pod: func(p *corev1.Pod) {
				p.Spec.EphemeralContainers = []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "debug", SecurityContext: privileged()}}}
			},
			message: `the pod needs root on the host: ephemeral container "debug" sets securityContext.privileged: true` + hostRootAdvice,
		},
		"hostNetwork": {
			pod:     func(p *corev1.Pod) { p.Spec.HostNetwork = true },
			message: "the pod needs root on the host: spec.hostNetwork: true" + hostRootAdvice,
		},
		"hostPID": {
			pod:     func(p *corev1.Pod) { p.Spec.HostPID = true },
			message: "the pod needs root on the host: spec.hostPID: true" + hostRootAdvice,
		},
		"hostIPC": {
			pod:     func(p *corev1.Pod) { p.Spec.HostIPC = true },
			message: "the pod needs root on the host: spec.hostIPC: true" + hostRootAdvice,
		},
		"hostUsers true": {
			pod:     func(p *corev1.Pod) { p.Spec.HostUsers = ptr.To(true) },
			message: "the pod needs root on the host: spec.hostUsers: true" + hostRootAdvice,
		},
		"all of them, in spec order": {
			pod: func(p *corev1.Pod) {
				p.Spec.HostNetwork, p.Spec.HostPID = true, true
				p.Spec.InitContainers = []corev1.Container{{Name: "setup", SecurityContext: privileged()}}
				p.Spec.Containers[0].SecurityContext = privileged()
			},
			message: `the pod needs root on the host: spec.hostNetwork: true, spec.hostPID: true, ` +
				`init container "setup" sets securityContext.privileged: true, container "main" sets securityContext.privileged: true` + hostRootAdvice,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			pod := basePod()
			tc.pod(pod)
			refused := Verdict{}
			if tc.message != "" {
				refused = Verdict{Reason: ReasonHostPrivileges, Message: tc.message}
			}
			if diff := cmp.Diff(refused, Policy{}.Admit(pod)); diff != "" {
				t.Errorf("by default (-want +got):\n%s", diff)
			}
			allowed := Verdict{HostUsers: tc.message != ""}
			policy, err := NewPolicy(true, nil)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(allowed, policy.Admit(pod)); diff != "" {
				t.Errorf("with host privileges allowed (-want +got):\n%s", diff)
			}
		})
	}
}

// hostTree makes <root>/shared (with a subdirectory, a link inside, a link
// out and a dangling link out) and <root>/outside, and returns root.
func hostTree(t *testing.T) string {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"shared/sub", "outside"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{
		"shared/in":      "sub",
		"shared/out":     "../outside",
		"shared/abs-out": filepath.Join(root, "outside"),
		"shared/dangle":  filepath.Join(root, "outside", "new"),
		"shared/loop":    "loop",
		"shared-link":    "shared",
	} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestHostPath(t *testing.T) {
	root := hostTree(t)
	shared := filepath.Join(root, "shared")
	policy, err := NewPolicy(false, []string{filepath.Join(root, "shared-link")}) // resolved to shared
	if err != nil {
		t.Fatal(err)
	}
	refusal := func(path, resolved string) string {
		where := path
		if resolved != "" {
			where += ", resolved " + resolved
		}
		return `hostPath volume "v" (` + where + `) is not under a directory the node shares (--shared-host-dirs: ` + shared + `)`
	}
	cases := map[string]struct {
		path    string
		rel     string // below shared, when admitted
		message string // "" when admitted
	}{
		"the shared directory":            {path: shared, rel: "."},
		"a file that does not exist yet":  {path: shared + "/new/deeper/file", rel: "new/deeper/file"},
		"a symlink inside":                {path: shared + "/in/x", rel: "sub/x"},
		"through the shared dir's link":   {path: root + "/shared-link/sub", rel: "sub"},
		"a .. that stays inside":          {path: shared + "/sub/../sub", rel: "sub"},
		"outside":                         {path: root + "/outside", message: refusal(root+"/outside", "")},
		"a sibling with the same prefix":  {path: shared + "-x", message: refusal(shared+"-x", "")},
		"a .. that leaves":                {path: shared + "/../outside", message: refusal(shared+"/../outside", root+"/outside")},
		"a relative symlink that escapes": {path: shared + "/out/f", message: refusal(shared+"/out/f", root+"/outside/f")},
		"an absolute symlink that escapes": {
			path: shared + "/abs-out", message: refusal(shared+"/abs-out", root+"/outside"),
		},
		"a dangling symlink that escapes": {
			path: shared + "/dangle", message: refusal(shared+"/dangle", root+"/outside/new"),
		},
		"a .. after a symlink leaves its target, not the link's directory": {
			path: shared + "/out/../sub", message: refusal(shared+"/out/../sub", root+"/sub"),
		},
		"a symlink loop": {
			path: shared + "/loop", message: `hostPath volume "v" (` + shared + `/loop): more than 40 symlinks in ` + shared + `/loop`,
		},
		"a relative path": {path: "data", message: `hostPath volume "v": path "data" is not absolute`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			pod := basePod()
			pod.Spec.Volumes = []corev1.Volume{hostPathVolume("v", tc.path)}
			want := Verdict{}
			if tc.message != "" {
				want = Verdict{Reason: ReasonHostPath, Message: tc.message}
			}
			if diff := cmp.Diff(want, policy.Admit(pod)); diff != "" {
				t.Errorf("verdict (-want +got):\n%s", diff)
			}
			var wantLoc Location
			if tc.message == "" {
				wantLoc = Location{Dir: shared, Rel: tc.rel}
			}
			if loc, _ := policy.HostPath("v", tc.path); loc != wantLoc {
				t.Errorf("location = %+v, want %+v", loc, wantLoc)
			}
		})
	}
}

func TestHostPathWithoutSharedDirs(t *testing.T) {
	pod := basePod()
	pod.Spec.Volumes = []corev1.Volume{hostPathVolume("data", "/var/data")}
	want := Verdict{Reason: ReasonHostPath, Message: `hostPath volume "data" (/var/data) is not under a directory the node shares (--shared-host-dirs: none)`}
	policy, err := NewPolicy(true, nil) // host privileges do not share directories
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, policy.Admit(pod)); diff != "" {
		t.Errorf("verdict (-want +got):\n%s", diff)
	}
}

func TestRefusalsAreListedTogether(t *testing.T) {
	pod := basePod()
	pod.Spec.HostIPC = true
	pod.Spec.Volumes = []corev1.Volume{hostPathVolume("a", "/a"), hostPathVolume("b", "/b")}
	want := Verdict{
		Reason: ReasonHostPrivileges,
		Message: "the pod needs root on the host: spec.hostIPC: true" + hostRootAdvice +
			`; hostPath volume "a" (/a) is not under a directory the node shares (--shared-host-dirs: none)` +
			`; hostPath volume "b" (/b) is not under a directory the node shares (--shared-host-dirs: none)`,
	}
	if diff := cmp.Diff(want, Policy{}.Admit(pod)); diff != "" {
		t.Errorf("verdict (-want +got):\n%s", diff)
	}
}

func TestNewPolicyChecksSharedDirs(t *testing.T) {
	root := hostTree(t)
	file := filepath.Join(root, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		dir, err string
	}{
		"relative":       {dir: "shared", err: `shared directory "shared": not an absolute path`},
		"missing":        {dir: root + "/nope", err: "shared directory " + root + "/nope: does not exist"},
		"a file":         {dir: file, err: "shared directory " + file + ": not a directory"},
		"a dangling one": {dir: root + "/shared/dangle", err: "shared directory " + root + "/shared/dangle: does not exist"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := NewPolicy(false, []string{root + "/shared", tc.dir})
			if err == nil || err.Error() != tc.err {
				t.Errorf("error = %v, want %s", err, tc.err)
			}
		})
	}
}
